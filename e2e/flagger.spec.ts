// Flagger in Chromium (issue 25): an on-call watches the payments canary's analysis on the app page (its
// iterations, the gate it waits on) and promotes it with a reason; Flagger, its real controller, promotes it.
// The Canary is the spec's own (test/support/canary-estate.ts: the seed's payments app in its own repository, Flux
// Kustomization and staging namespace, with its own business endpoint, a SIMULATION); the seed's is only read.
import { expect, test, type Page } from '@playwright/test';
import { PAYMENTS_IMAGE } from '../sandbox/seed.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';
import { canaryEstate, type CanaryEstate } from '../test/support/canary-estate.ts';
import { consoleShows } from './support/estate.ts';

let pay: CanaryEstate | undefined;

test.beforeAll(async () => {
  test.setTimeout(300_000);
  pay = await canaryEstate('flagger-e2e');
  await consoleShows(pay.app, { env: 'staging', sha: pay.estate.seedCommit });
});
// the estate goes with its Canary: nothing to restore
test.afterAll(async () => {
  test.setTimeout(180_000);
  await pay?.teardown();
});

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('an on-call watches a Flagger canary wait on its gate and promotes it with a reason', async ({ page }) => {
  test.setTimeout(300_000);
  if (!pay) throw new Error('the flagger estate was not made (its beforeAll failed)');
  await page.goto(`/apps/${pay.app}`);
  await signInAs(page, 'oncall');
  const canary = page.getByTestId('flagger-canary');
  await expect(canary).toHaveAttribute('data-phase', /Succeeded|Initialized|Failed/, { timeout: 120_000 });
  await pay.commit(PAYMENTS_IMAGE, { gate: true });
  // live: the analysis runs its iterations, then waits on the promotion gate
  await expect(canary).toHaveAttribute('data-phase', 'WaitingPromotion', { timeout: 180_000 });
  await expect(page.getByTestId('flagger-waiting')).toContainText('promotion gate');
  await expect(page.getByTestId('flagger-promote')).toBeDisabled();
  await page.getByTestId('flagger-reason').fill('payments canary looks good in the dashboards');
  await page.getByTestId('flagger-promote').click();
  await expect(page.getByTestId('flagger-done')).toContainText('promotion-gate');
  await expect(canary).toHaveAttribute('data-phase', 'Succeeded', { timeout: 120_000 });
  await page.screenshot({ path: 'test-results/flagger-promoted.png', fullPage: true });
});
