// ApplicationSets in Chromium (issue 24): a developer sees on the overview that the `tenants` ApplicationSet's
// controller is held (a list element was deleted: it wants to delete tenant-gamma), opens the ApplicationSet,
// reads which Application its generators no longer produce, and previews the shrink; a reviewer approves it; the
// real applicationset-controller deletes the Application and the evidence shows the chain.
import { expect, test, type Page } from '@playwright/test';
import { waitFor } from '../sandbox/procs.ts';
import { kubectl } from '../sandbox/state.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';

const CLUSTER = 'nonprod';
const appExists = (name: string) =>
  kubectl(CLUSTER, ['-n', 'argocd', 'get', 'application', name, '--ignore-not-found', '-o', 'name']).trim() !== '';
function setTenants(tenants: string[]): void {
  kubectl(CLUSTER, [
    ...['-n', 'argocd', 'patch', 'applicationset', 'tenants', '--type', 'json', '-p'],
    JSON.stringify([
      { op: 'replace', path: '/spec/generators/0/list/elements', value: tenants.map((tenant) => ({ tenant })) },
    ]),
  ]);
}

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test.afterAll(async () => {
  test.setTimeout(180_000);
  setTenants(['alpha', 'beta', 'gamma']);
  await waitFor('tenant-gamma generated again', async () => appExists('tenant-gamma'), {
    timeoutMs: 120_000,
    intervalMs: 2000,
  });
});

test('a reviewer approves an ApplicationSet shrink; the controller deletes the Application', async ({
  page,
  browser,
}) => {
  test.setTimeout(300_000);
  setTenants(['alpha', 'beta']);
  await page.goto('/');
  await signInAs(page, 'developer');
  const group = page.locator('[data-testid="appset-group"][data-appset="tenants"]');
  await expect(group).toContainText('tenant-gamma');
  await expect(group.getByTestId('appset-held')).toBeVisible({ timeout: 90_000 });
  await group.getByRole('link', { name: 'tenants' }).click();
  await expect(page).toHaveURL(/\/appsets\/nonprod\/argocd\/tenants$/);
  await expect(page.getByTestId('appset-param-row')).toHaveCount(2);
  await expect(page.locator('[data-testid="appset-app"][data-generated="false"]')).toContainText('tenant-gamma');
  await expect(page.getByTestId('appset-removed')).toContainText('tenant-gamma: with the 1 live object it manages');
  await page.getByTestId('preview-shrink').click();
  await expect(page).toHaveURL(/\/prune-previews\/[0-9a-f-]{36}$/);
  const previewUrl = page.url();
  await expect(page.getByRole('link', { name: /ApplicationSet argocd\/tenants/ })).toBeVisible();
  await expect(page.locator('[data-testid="prune-candidate"][data-name="tenant-gamma"]')).toBeVisible();
  await expect(page.locator('[data-testid="prune-candidate"][data-name="gamma-tenant-config"]')).toBeVisible();
  await expect(page.getByTestId('prune-approve')).toBeDisabled();

  const ctx = await browser.newContext();
  const reviewer = await ctx.newPage();
  await reviewer.goto(previewUrl);
  await signInAs(reviewer, 'reviewer');
  await reviewer.getByTestId('prune-comment').fill('tenant gamma offboarded');
  await reviewer.getByTestId('prune-approve').click();
  await expect(reviewer.getByTestId('prune-status')).toHaveText('done', { timeout: 60_000 });
  await waitFor('the applicationset-controller deleted tenant-gamma', async () => !appExists('tenant-gamma'), {
    timeoutMs: 90_000,
    intervalMs: 2000,
  });
  expect(appExists('tenant-beta')).toBe(true);
  // the preview says the controller deleted it (read live; polled while it waited)
  await expect(reviewer.getByTestId('prune-handover')).toHaveAttribute('data-state', 'deleted', { timeout: 30_000 });
  await expect(reviewer.getByTestId('prune-handover')).toContainText('the applicationset-controller');
  const previewId = /\/prune-previews\/([0-9a-f-]{36})$/.exec(previewUrl)?.[1] ?? '';
  await reviewer.goto(`/evidence?q=${previewId}`);
  const rows = reviewer.getByTestId('evidence-row');
  for (const type of ['prune.requested', 'prune.approved', 'prune.executed'])
    await expect(rows.filter({ has: reviewer.getByRole('cell', { name: type, exact: true }) })).toHaveCount(1);
  await expect(rows.filter({ has: reviewer.getByRole('cell', { name: 'prune.stamp', exact: true }) })).toHaveCount(2);
  await reviewer.screenshot({ path: 'test-results/appset-shrink-evidence.png', fullPage: true });
  await ctx.close();
});
