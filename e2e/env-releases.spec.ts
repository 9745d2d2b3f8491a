// Issue 16 in Chromium against the real sandbox: the dev environment's release page, reached from the
// overview's environment heading, shows its four charts (each named, its numbers in a table for screen
// readers) and the environment's apps, each linking to its app page.
import { expect, test } from '@playwright/test';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const CHARTS = [
  'Deployments per day',
  'Lead time, commit → Healthy',
  'Change failure rate',
  'Drift and freeze events per day',
];

test('/envs/dev: four charts with their headings and the apps of dev', async ({ page }) => {
  await page.goto('/');
  await page.locator('[data-testid="env-column"][data-env="dev"]').getByRole('link', { name: 'dev releases' }).click();
  await expect(page).toHaveURL(/\/envs\/dev$/);
  await expect(page).toHaveTitle('dev releases — GitOps console');
  await expect(page.getByRole('heading', { level: 1, name: 'dev releases' })).toBeVisible();
  for (const name of CHARTS) await expect(page.getByRole('heading', { level: 2, name })).toBeVisible();
  // each chart is named for assistive technology, and its numbers are in a (visually hidden) table
  await expect(
    page.getByRole('img', { name: /^Bar chart: deployments per day in dev, the last 30 days/ }),
  ).toBeVisible();
  await expect(page.getByRole('table', { name: 'Deployments per day in dev' }).getByRole('row')).toHaveCount(31);
  await expect(page.getByTestId('env-chart').first().locator('.recharts-wrapper > svg.recharts-surface')).toBeVisible();

  const row = page.getByTestId('env-app-row').filter({ hasText: 'digital-human-dev' });
  await expect(row).toBeVisible();
  await row.getByRole('link', { name: 'digital-human-dev' }).click();
  await expect(page).toHaveURL(/\/apps\/nonprod\/flux-system\/kustomization\/digital-human-dev$/);
  // and back through the breadcrumb's environment
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'environment dev' }).click();
  await expect(page).toHaveURL(/\/envs\/dev$/);
  await expect(page.getByTestId('env-app-row').first()).toBeVisible();
});
