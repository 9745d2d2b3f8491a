// Argo CD for real (issue 24), in Chromium: a developer opens an Argo CD app whose sync waits on a wave and reads
// why it is not synced yet, in one sentence, with the sync's steps in the order they run. The app is the seeded
// `ledger-staging` (a PreSync migration hook, wave 0 config, wave 1 workloads, a PostSync smoke test), reconciled
// by Argo CD's own controller in the sandbox.
import { expect, test } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commitAndPush, resetLedger, waitForArgoSynced, writeRepoFile } from '../sandbox/scenario.ts';
import { ledgerFiles, unschedulable } from '../sandbox/seed.ts';
import { signIn } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';

const APP = 'nonprod/argocd/application/ledger-staging';

function commitLedger(message: string, stuck: boolean): string {
  const files = ledgerFiles();
  if (stuck) files['argo/ledger/deployment.yaml'] = unschedulable(files['argo/ledger/deployment.yaml'] ?? '');
  return commitAndPush(message, (w) => {
    for (const [p, c] of Object.entries(files)) writeRepoFile(w, p, c);
  });
}

test.afterAll(async () => {
  test.setTimeout(600_000);
  // the failing rollout's sync stopped (as on-call would), the seed's ledger back and synced
  await resetLedger();
});

test('a developer reads why an Argo CD app is not synced yet: its sync waits on wave 1, the Deployment not healthy', async ({
  browser,
}) => {
  test.setTimeout(420_000);
  const base = process.env.E2E_BASE_URL as string;
  const storage = join(process.env.E2E_DATA_DIR as string, 'storage-developer.json');
  writeFileSync(storage, JSON.stringify(storageStateFor(await signIn(base, 'developer'))));
  const context = await browser.newContext({ baseURL: base, storageState: storage });
  const page = await context.newPage();
  await waitForArgoSynced('nonprod', 'ledger-staging');
  await page.goto(`/apps/${APP}`);
  // at rest: the last sync succeeded, nothing to explain; its steps in order
  await expect(page.getByTestId('argo-sync')).toHaveAttribute('data-phase', 'Succeeded');
  await expect(page.getByTestId('sync-why')).toHaveCount(0);

  // a release whose new Pods cannot be scheduled: Argo CD runs the hook, wave 0, then waits on wave 1
  const sha = commitLedger('Ledger on nodes that do not exist (argocd e2e)', true);
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
