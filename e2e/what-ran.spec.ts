// Issue 28's e2e: an auditor opens "what ran in prod at <time>" on the prod app's page and compares it with the
// release before. A commit scales prod's session cache (2 → 3); the console records the release with its
// manifests; the auditor sees the release live at that moment, its objects, and the one changed field. On the
// spec's own estate (test/support/own-estate.ts: the seed's prod service in a namespace of its own, mapped to
// prod); the estate is deleted afterwards.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { writeRepoFile } from '../sandbox/scenario.ts';
import { waitFor } from '../sandbox/procs.ts';
import { signIn } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';
import { digitalHumanTemplate } from '../test/support/own-estate.ts';
import { specEstate } from './support/estate.ts';

const PROD = 'overlays/prod/kustomization.yaml';
const COUNT = /(name: session-cache\n\s+count: )(\d+)/;
const base = process.env.E2E_BASE_URL ?? '';

const own = specEstate('e2e-what-ran', 'prod');

test('an auditor opens what ran in prod at a time and compares it with the release before', async ({ browser }) => {
  test.setTimeout(360_000);
  const auditor = await signIn(base, 'auditor');
  const storage = join(process.env.E2E_DATA_DIR ?? '/tmp', 'storage-auditor.json');
  writeFileSync(storage, JSON.stringify(storageStateFor(auditor)));

  const APP = own().appId();
  const original = digitalHumanTemplate('prod')[PROD] ?? '';
  const before = Number(COUNT.exec(original)?.[2]);
  expect(before, 'the prod overlay sets session-cache replicas').toBeGreaterThan(0);
  /** the release the console's recorder says was live in the estate's prod app now */
  const releaseNow = async (): Promise<string | undefined> => {
    const r = await fetch(`${base}/api/apps/${APP}/releases/at?time=${encodeURIComponent(new Date().toISOString())}`, {
      headers: { Cookie: auditor.cookie },
    });
    return r.ok ? ((await r.json()) as { release?: { sha?: string } }).release?.sha : undefined;
  };
  // the release before: the recorder has recorded the estate's first commit (a new app's first release) before the
  // next is pushed, or it may only ever see the second
  await waitFor(
    `the console's record of ${own().seedCommit.slice(0, 8)} applied in prod`,
    async () => (await releaseNow()) === own().seedCommit,
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  const sha = own().push('Prod: one more session cache (what-ran e2e)', (w) =>
    writeRepoFile(
      w,
      PROD,
      readFileSync(join(w, PROD), 'utf8').replace(COUNT, (_m, a: string) => `${a}${before + 1}`),
    ),
  );
  await own().waitApplied(sha, undefined, 180_000);
  // the console records the apply (its release recorder) before the auditor asks
  await waitFor(
    `the console's record of ${sha.slice(0, 8)} applied in prod`,
    async () => (await releaseNow()) === sha,
    {
      timeoutMs: 120_000,
      intervalMs: 1000,
    },
  );

  const ctx = await browser.newContext({ baseURL: base, storageState: storage });
  try {
    const page = await ctx.newPage();
    await page.goto(`/apps/${APP}`);
    const box = page.getByTestId('what-ran');
    await expect(box.getByLabel('What ran in prod at')).toBeVisible();
    // the moment asked: now, typed as the auditor would (seconds included)
    const d = new Date(Date.now() + 1000);
    const p = (n: number) => String(n).padStart(2, '0');
    const local = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    await box.getByLabel('What ran in prod at').fill(local);
    await box.getByRole('button', { name: 'Show' }).click();

    const rel = box.getByTestId('what-ran-release');
    await expect(rel).toHaveAttribute('data-sha', sha);
    await expect(rel).toContainText(`release ${sha.slice(0, 7)}`);
    // its objects, as rendered and kept by render hash
    const objects = box.getByTestId('what-ran-objects');
    await expect(objects).toContainText(/\d+ objects as rendered \(render hash sha256:[0-9a-f]{64}/);
    await objects.locator('summary').first().click();
    const item = objects.locator('li').filter({
      has: page.locator('summary', { hasText: new RegExp(`^Deployment ${own().namespace}/session-cache$`) }),
    });
    await item.locator('summary').click();
    await expect(item.locator('pre')).toContainText(`"replicas": ${before + 1}`);

    // compared with the release before: exactly the replica count
    await box.getByRole('button', { name: /Compare with the release before/ }).click();
    const cmp = box.getByTestId('release-compare');
    await expect(cmp).toContainText('1 changed, 0 added, 0 removed');
    const obj = cmp.locator('[data-testid="compare-object"][data-kind="Deployment"][data-name="session-cache"]');
    const row = obj.getByTestId('compare-field');
    await expect(row).toHaveCount(1);
    await expect(row.locator('td').nth(0)).toHaveText('spec.replicas');
    await expect(row.locator('td').nth(1)).toHaveText(String(before));
    await expect(row.locator('td').nth(2)).toHaveText(String(before + 1));
  } finally {
    await ctx.close();
  }
});
