// A Flux HelmRelease in Chromium (issue 26, part 4): a developer finds infra-dev's `status-page` release on the
// overview, opens it and reads its chart and version, the tree of the objects helm-controller installed, and the
// diff rendered as helm-controller renders it, with helm-controller owning the fields.
import { expect, test, type Page } from '@playwright/test';
import { TEST_PASSWORD } from '../test/support/auth.ts';

test.use({ baseURL: process.env.E2E_BASE_URL });

const HR = '/apps/nonprod/dev/helmrelease/status-page';

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('a developer opens a HelmRelease: chart and version, the installed objects, the diff as helm-controller renders it', async ({
  page,
}) => {
  await page.goto('/?env=dev');
  await signInAs(page, 'developer');
  const card = page.locator('[data-testid="app-card"][data-app-id="nonprod/dev/helmrelease/status-page"]');
  await expect(card).toBeVisible();
  await expect(card).toContainText('status-page');
  await page.goto(HR);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('status-page');
  await expect(page.getByTestId('source-path')).toHaveText(/status-page @ 0\.1\.0/);
  await expect(page.getByTestId('observed-revision')).toContainText('0.1.0', { timeout: 120_000 });
  // the tree: what helm-controller installed (its inventory), the Deployment down to its Pod
  await page.getByRole('button', { name: 'expand all', exact: true }).click();
  const dep = page.locator('[data-testid="tree-row"][data-kind="Deployment"][data-name="status-page"]');
  await expect(dep).toHaveAttribute('data-health', 'Healthy', { timeout: 60_000 });
  await expect(page.locator('[data-testid="tree-row"][data-kind="Service"][data-name="status-page"]')).toBeVisible();
  await expect(page.locator('[data-testid="tree-row"][data-kind="Pod"]').first()).toBeVisible();
  // the diff: rendered with helm as helm-controller does, nothing differs, helm-controller owns the fields
  await page.getByLabel('show unchanged objects').check();
  const cm = page.locator('[data-testid="object-diff"][data-kind="ConfigMap"][data-name="status-page"]');
  await expect(cm).toHaveAttribute('data-status', 'unchanged', { timeout: 60_000 });
  await expect(page.getByTestId('ownership-map').locator('[data-manager="helm-controller"]')).toBeVisible();
  await page.screenshot({ path: 'test-results/helmrelease.png', fullPage: true });
});
