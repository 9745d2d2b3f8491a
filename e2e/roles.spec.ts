// Issue 39 (item 5): what each role sees and may do on an app's page, decided per role and written down here as a
// table (not computed from src/domain/access.ts: a change to the roles must change this table too). Each test user
// of test/support/auth.ts (viewer, developer, reviewer, oncall, auditor, admin) opens the same dev app in Chromium:
// Reconcile, Preview prune and Freeze enabled or disabled with their reason; the Releases section's rows (or why
// not); Roll back on the older release; the app's evidence (or why not) and the release states' evidence links;
// the main nav's Evidence link. For a row to roll back to, one commit scales the dev session cache (1 → 2). On the
// spec's own estate (test/support/own-estate.ts: the seed's dev service in a namespace of its own, mapped to dev);
// the estate is deleted afterwards.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { waitFor } from '../sandbox/procs.ts';
import { writeRepoFile } from '../sandbox/scenario.ts';
import { as, signIn, TEST_USERS } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';
import { digitalHumanTemplate } from '../test/support/own-estate.ts';
import { E2E_BASE, e2eAdmin, specEstate } from './support/estate.ts';

const DEV = 'overlays/dev/kustomization.yaml';
const COUNT = /(name: session-cache\n\s+count: )(\d+)/;

type Role = 'viewer' | 'developer' | 'reviewer' | 'oncall' | 'auditor' | 'admin';

/** The decision: what each role may do (true: enabled) and see on a dev app's page. */
interface Sees {
  /** "Reconcile now" enabled; otherwise disabled, its reason shown beside it */
  reconcile: boolean;
  /** "Preview prune" enabled; otherwise disabled, its reason in its title */
  previewPrune: boolean;
  /** "Freeze" enabled; otherwise disabled, its reason shown beside it */
  freeze: boolean;
  /** the Releases section lists the release rows; otherwise it says why not and lists none */
  releases: boolean;
  /** "Roll back to <sha>" on the older release row enabled (a row only when `releases`) */
  rollback: boolean;
  /** the app's evidence events, the release states' "evidence #" links and the main nav's Evidence link */
  evidence: boolean;
}
const TABLE: Record<Role, Sees> = {
  viewer: { reconcile: false, previewPrune: false, freeze: false, releases: false, rollback: false, evidence: false },
  developer: { reconcile: true, previewPrune: true, freeze: false, releases: true, rollback: true, evidence: false },
  reviewer: { reconcile: false, previewPrune: true, freeze: false, releases: true, rollback: false, evidence: true },
  oncall: { reconcile: true, previewPrune: true, freeze: true, releases: true, rollback: true, evidence: true },
  auditor: { reconcile: false, previewPrune: false, freeze: false, releases: true, rollback: false, evidence: true },
  admin: { reconcile: true, previewPrune: true, freeze: true, releases: true, rollback: true, evidence: true },
};
const ROLES = Object.keys(TABLE) as Role[];

/** The reasons said to whoever may not (the estate's app is on cluster nonprod, environment dev). */
const NEED = {
  reconcile: 'You need the developer or oncall role on nonprod/dev to reconcile this app',
  previewPrune: 'You need the developer, reviewer or oncall role on nonprod/dev to request a prune preview',
  freeze: 'You need the oncall role on nonprod/dev to freeze or unfreeze deployments',
  releases: "You need the developer, reviewer, oncall or auditor role on nonprod/dev to see this app's releases.",
  rollback: 'You need the developer or oncall role on nonprod/dev to open a rollback pull request',
  evidence: "You need the reviewer, oncall or auditor role on nonprod/dev to see this app's evidence.",
};

const own = specEstate('e2e-roles', 'dev');

test('each role sees and may do on an app page what the table says', async ({ browser }) => {
  test.setTimeout(360_000);
  // each role's test user holds exactly that role, everywhere
  for (const role of ROLES) expect(TEST_USERS[role], `the test user ${role}`).toEqual([role]);
  const base = E2E_BASE();
  const admin = await e2eAdmin();
  const APP = own().appId();
  const seed = own().seedCommit;

  /** the commits the console's release recorder has recorded for the estate's app, newest first */
  const released = async (): Promise<string[]> => {
    const r = await as(admin, base, `/api/apps/${APP}/releases`);
    return r.status === 200 ? ((r.body.releases ?? []) as Array<{ sha: string }>).map((x) => x.sha) : [];
  };
  // the recorder has recorded the estate's first commit (a new app's first release) before the next is pushed, or
  // it may only ever see the second
  await waitFor(`the console's release ${seed.slice(0, 8)}`, async () => (await released()).includes(seed), {
    timeoutMs: 120_000,
    intervalMs: 1000,
  });
  const before = Number(COUNT.exec(digitalHumanTemplate('dev')[DEV] ?? '')?.[2]);
  expect(before, 'the dev overlay sets session-cache replicas').toBeGreaterThan(0);
  const sha = own().push('Dev: one more session cache (roles e2e)', (w) =>
    writeRepoFile(
      w,
      DEV,
      readFileSync(join(w, DEV), 'utf8').replace(COUNT, (_m, a: string) => `${a}${before + 1}`),
    ),
  );
  await own().waitApplied(sha, undefined, 180_000);
  await waitFor(
    `the console's releases ${sha.slice(0, 8)} and ${seed.slice(0, 8)}`,
    async () => {
      const shas = await released();
      return shas.includes(sha) && shas.includes(seed);
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );

  for (const role of ROLES) {
    const see = TABLE[role];
    await test.step(role, async () => {
      const storage = join(process.env.E2E_DATA_DIR ?? '/tmp', `storage-roles-${role}.json`);
      writeFileSync(storage, JSON.stringify(storageStateFor(await signIn(base, role))));
      const ctx = await browser.newContext({ baseURL: base, storageState: storage });
      try {
        const page = await ctx.newPage();
        await page.goto(`/apps/${APP}`);
        // signed in as the role: every permission below is computed from this session
        await expect(page.getByTestId('current-roles')).toHaveText(role);
        const header = page.getByTestId('app-header');
        await expect(header).toBeVisible();

        // Reconcile
        const reconcile = header.getByTestId('reconcile');
        await expect(reconcile).toHaveText('Reconcile now');
        if (see.reconcile) {
          await expect.soft(reconcile, `${role}: Reconcile`).toBeEnabled();
          await expect.soft(header.getByTestId('reconcile-disabled-reason')).toHaveCount(0);
        } else {
          await expect.soft(reconcile, `${role}: Reconcile`).toBeDisabled();
          await expect.soft(header.getByTestId('reconcile-disabled-reason')).toHaveText(NEED.reconcile);
        }

        // Preview prune
        const prune = header.getByTestId('preview-prune');
        await expect(prune).toHaveText('Preview prune');
        if (see.previewPrune) await expect.soft(prune, `${role}: Preview prune`).toBeEnabled();
        else {
          await expect.soft(prune, `${role}: Preview prune`).toBeDisabled();
          await expect.soft(prune).toHaveAttribute('title', NEED.previewPrune);
        }

        // Freeze
        const freeze = header.getByTestId('freeze');
        await expect(freeze).toContainText('Freeze');
        if (see.freeze) {
          await expect.soft(freeze, `${role}: Freeze`).toBeEnabled();
          await expect.soft(header.getByTestId('freeze-disabled-reason')).toHaveCount(0);
        } else {
          await expect.soft(freeze, `${role}: Freeze`).toBeDisabled();
          await expect.soft(header.getByTestId('freeze-disabled-reason')).toHaveText(NEED.freeze);
        }

        // Releases, Roll back, and the release states' evidence links
        const releases = page.getByTestId('app-releases');
        await expect(releases.getByRole('heading', { name: 'Releases' })).toBeVisible();
        const row = (s: string) => releases.locator(`[data-testid="release"][data-sha="${s}"]`);
        const evidenceLinks = releases.getByRole('link', { name: /^evidence #\d+$/ });
        if (see.releases) {
          await expect.soft(row(sha), `${role}: the new release's row`).toBeVisible();
          await expect.soft(row(seed), `${role}: the older release's row`).toBeVisible();
          await expect.soft(releases).not.toContainText("to see this app's releases");
          const rollback = row(seed).getByTestId('rollback');
          await expect.soft(rollback).toHaveText(`Roll back to ${seed.slice(0, 7)}`);
          if (see.rollback) await expect.soft(rollback, `${role}: Roll back`).toBeEnabled();
          else {
            await expect.soft(rollback, `${role}: Roll back`).toBeDisabled();
            await expect.soft(rollback).toHaveAttribute('title', NEED.rollback);
          }
          // the live release is not rolled back to
          await expect.soft(row(sha).getByTestId('rollback')).toHaveCount(0);
          if (see.evidence) await expect.soft(evidenceLinks.first(), `${role}: evidence links`).toBeVisible();
          else await expect.soft(evidenceLinks, `${role}: evidence links`).toHaveCount(0);
        } else {
          await expect.soft(releases, `${role}: why no releases`).toContainText(NEED.releases);
          await expect.soft(releases.getByTestId('release'), `${role}: release rows`).toHaveCount(0);
          await expect.soft(releases.getByTestId('rollback')).toHaveCount(0);
        }

        // the app's evidence
        const evidence = page.getByTestId('app-evidence');
        await expect(evidence.getByRole('heading', { name: 'Evidence' })).toBeVisible();
        if (see.evidence) {
          await expect.soft(evidence.getByTestId('evidence-event').first(), `${role}: evidence events`).toBeVisible();
          await expect.soft(evidence.getByTestId('evidence-hidden')).toHaveCount(0);
        } else {
          await expect
            .soft(evidence.getByTestId('evidence-hidden'), `${role}: why no evidence`)
            .toHaveText(NEED.evidence);
          await expect.soft(evidence.getByTestId('evidence-event'), `${role}: evidence events`).toHaveCount(0);
        }

        // the main nav (shown once the session is: its Freezes link is everyone's)
        const nav = page.getByRole('navigation', { name: 'Main' });
        await expect(nav.getByTestId('nav-freezes')).toBeVisible();
        await expect
          .soft(nav.getByRole('link', { name: 'Evidence', exact: true }), `${role}: the Evidence link`)
          .toHaveCount(see.evidence ? 1 : 0);
      } finally {
        await ctx.close();
      }
    });
  }
});
