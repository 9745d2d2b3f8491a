// Argo CD for real (issue 24), in Chromium: a developer opens an Argo CD app whose sync waits on a wave and reads
// why it is not synced yet, in one sentence, with the sync's steps in the order they run. The app is the seed's
// ledger (a PreSync migration hook, wave 0 config, wave 1 workloads, a PostSync smoke test) on the spec's own
// estate (test/support/own-estate.ts: its own repository and Application in a t-staging-* namespace), reconciled
// by Argo CD's own controller in the sandbox; the seed's ledger-staging is only read by others, never changed here.
import { expect, test } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeRepoFile } from '../sandbox/scenario.ts';
import { ledgerFiles, unschedulable } from '../sandbox/seed.ts';
import { signIn } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';
import { ownEstate, type Estate } from '../test/support/own-estate.ts';

const LEDGER = 'ledger';
let estate: Estate | undefined;
const own = () => estate as Estate;

test.beforeAll(async () => {
  test.setTimeout(300_000);
  // automated with prune and self-heal, like the seed's ledger-staging
  estate = await ownEstate({
    name: 'e2e-argocd',
    env: 'staging',
    files: ledgerFiles(),
    argoApps: [{ name: LEDGER, path: 'argo/ledger' }],
  });
  // at rest: the first sync ran to its end (the PostSync hook after wave 1)
  await estate.waitArgoSynced(LEDGER, estate.seedCommit, { timeoutMs: 240_000 });
});

test.afterAll(async () => {
  test.setTimeout(180_000);
  await estate?.teardown();
});

/** The seed's ledger, its new Pods unschedulable (nodes that do not exist): wave 1 never becomes healthy. */
function pushStuckLedger(message: string): string {
  return own().push(message, (w) => {
    const files = ledgerFiles();
    files['argo/ledger/deployment.yaml'] = unschedulable(files['argo/ledger/deployment.yaml'] ?? '');
    for (const [p, c] of Object.entries(files)) writeRepoFile(w, p, c);
  });
}

test('a developer reads why an Argo CD app is not synced yet: its sync waits on wave 1, the Deployment not healthy', async ({
  browser,
}) => {
  test.setTimeout(420_000);
  const base = process.env.E2E_BASE_URL as string;
  const storage = join(process.env.E2E_DATA_DIR as string, 'storage-developer.json');
  writeFileSync(storage, JSON.stringify(storageStateFor(await signIn(base, 'developer'))));
  const context = await browser.newContext({ baseURL: base, storageState: storage });
  const page = await context.newPage();
  await page.goto(`/apps/${own().argoAppId(LEDGER)}`);
  // at rest: the last sync succeeded, nothing to explain; its steps in order
  await expect(page.getByTestId('argo-sync')).toHaveAttribute('data-phase', 'Succeeded');
  await expect(page.getByTestId('sync-why')).toHaveCount(0);

  // a release whose new Pods cannot be scheduled: Argo CD runs the hook, wave 0, then waits on wave 1
  const sha = pushStuckLedger('Ledger on nodes that do not exist (argocd e2e)');
  const why = page.getByTestId('sync-why');
  await expect(why).toContainText('Not synced yet: waiting on wave 1: Deployment ledger not healthy', {
    timeout: 180_000,
  });
  await expect(page.getByTestId('argo-sync')).toHaveAttribute('data-phase', 'Running');
  await expect(page.getByTestId('argo-sync')).toContainText(`Last sync running at ${sha.slice(0, 7)}`);
  const steps = page.getByTestId('sync-step');
  await expect(steps.nth(0)).toHaveAttribute('data-phase', 'PreSync');
  await expect(steps.nth(0)).toContainText('PreSync hook Job ledger-db-migrate: Succeeded');
  await expect(page.locator('[data-testid="sync-step"][data-wave="1"]')).toContainText('Deployment ledger: Running');
  await page.screenshot({ path: 'test-results/argocd-sync-waits-on-wave.png', fullPage: true });
  await context.close();
});
