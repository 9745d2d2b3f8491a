// Issue #3 acceptance in Chromium against the real sandbox and BFF. The seed's apps are only read; the pushed
// commit goes to the spec's own staging estate (test/support/own-estate.ts). Serial: it stops the prod apiserver
// and counts the seed's cards.
import { expect, test } from '@playwright/test';
import { startApiserver, stopApiserver } from '../sandbox/sandbox.ts';
import { repoHead, waitForKustomizationRevision, writeRepoFile } from '../sandbox/scenario.ts';
import { specEstate } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const own = specEstate('e2e-overview', 'staging');

test('overview shows Flux and Argo CD apps per env with health and revision', async ({ page }) => {
  const head = repoHead().slice(0, 7);
  await page.goto('/');
  const columns = page.getByTestId('env-column');
  await expect(columns.first()).toBeVisible();
  expect(await columns.evaluateAll((els) => els.map((e) => e.getAttribute('data-env')).slice(0, 3))).toEqual([
    'dev',
    'staging',
    'prod',
  ]);
  const dev = page.locator('[data-app-id="nonprod/flux-system/kustomization/digital-human-dev"]');
  // healthy at rest: the HPA has the sandbox's metrics API
  await expect(dev.getByTestId('health')).toHaveAttribute('data-status', 'Healthy');
  await expect(dev.getByTestId('sync')).toHaveAttribute('data-status', 'Synced');
  await expect(dev.getByTestId('revision')).toHaveText(head);
  const argo = page.locator('[data-app-id="prod/argocd/application/edge-gateway-prod"]');
  await expect(argo).toContainText('Argo CD');
  await expect(argo.getByTestId('health')).toHaveAttribute('data-status', 'Healthy');
  // digital-human-prod, its infra-prod (dependsOn) and edge-gateway-prod
  await expect(page.locator('[data-env="prod"]').getByTestId('app-card')).toHaveCount(3);
  await page.screenshot({ path: 'test-results/overview.png', fullPage: true });
});

test('filters and search live in the URL', async ({ page }) => {
  await page.goto('/?controller=argocd');
  // edge-gateway ×2, ledger-staging, checkout-staging (a Rollout), and the seeded ApplicationSets' web-dev|staging
  // and tenant-alpha|beta|gamma
  await expect(page.getByTestId('app-card')).toHaveCount(9);
  await page.getByLabel('Search apps').fill('edge-gateway-prod');
  await expect(page).toHaveURL(/q=edge-gateway-prod/);
  await expect(page.getByTestId('app-card')).toHaveCount(1);
  await page.reload();
  await expect(page.getByTestId('app-card')).toHaveCount(1);
  await expect(page.getByLabel('Search apps')).toHaveValue('edge-gateway-prod');
});

test('a pushed commit changes the observed revision on screen without reload', async ({ page }) => {
  await page.goto('/');
  const card = page.locator(`[data-app-id="${own().appId()}"]`);
  await expect(card.getByTestId('revision')).toHaveText(own().seedCommit.slice(0, 7));
  await expect(page.getByTestId('stream-status')).toHaveText('updates: live');
  const marker = await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = Math.random()));
  const sha = own().push('e2e: staging note', (w) =>
    writeRepoFile(w, 'overlays/staging/NOTES.md', `e2e ${Date.now()}\n`),
  );
  await own().waitApplied(sha);
  await expect(card.getByTestId('revision')).toHaveText(sha.slice(0, 7));
  // same document: no reload happened
  expect(await page.evaluate(() => (window as unknown as { __marker: number }).__marker)).toBe(marker);
});

test('app page shows source, revision and automation flags', async ({ page }) => {
  await waitForKustomizationRevision('prod', 'digital-human-prod', repoHead());
  await page.goto('/');
  await page.locator('[data-app-id="prod/flux-system/kustomization/digital-human-prod"]').click();
  await expect(page).toHaveURL(/\/apps\/prod\/flux-system\/kustomization\/digital-human-prod$/);
  const header = page.getByTestId('app-header');
  await expect(header).toContainText('digital-human.git');
  await expect(page.getByTestId('observed-revision')).toContainText(repoHead());
  await expect(page.getByTestId('automation')).toContainText('prune off');
  await expect(page.getByTestId('inventory')).toContainText('Deployment prod/render-worker');
});

test('stopping the prod apiserver shows the stale banner; restarting clears it', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('[data-app-id="prod/flux-system/kustomization/digital-human-prod"]')).toBeVisible();
  await stopApiserver('prod');
  try {
    await expect(page.getByTestId('stale-banner')).toContainText('Cluster prod is unreachable');
    await expect(page.locator('[data-app-id="prod/flux-system/kustomization/digital-human-prod"]')).toContainText(
      'stale',
    );
    await page.screenshot({ path: 'test-results/stale.png', fullPage: true });
    // the app's own page says so in its header: never a green Synced/Healthy from a cluster the console cannot reach
    await page.locator('[data-app-id="prod/flux-system/kustomization/digital-human-prod"]').click();
    const header = page.getByTestId('app-header');
    await expect(header.getByTestId('app-stale')).toContainText(/stale since .*cluster prod is unreachable/);
    await expect(header.getByTestId('sync')).toHaveAttribute('data-stale', 'true');
    await expect(header.getByTestId('health')).toContainText('last known');
  } finally {
    await startApiserver('prod');
  }
  await expect(page.getByTestId('stale-banner')).toHaveCount(0);
});
