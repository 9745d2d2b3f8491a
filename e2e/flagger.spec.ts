// Flagger in Chromium (issue 25): an on-call watches the payments canary's analysis on the app page (its
// iterations, the gate it waits on) and promotes it with a reason; Flagger, its real controller, promotes it.
import { expect, test, type Page } from '@playwright/test';
import { commitAndPush, writeRepoFile } from '../sandbox/scenario.ts';
import { paymentsFiles, PAYMENTS_IMAGE } from '../sandbox/seed.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';

const APP = '/apps/nonprod/flux-system/kustomization/payments-staging';

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('an on-call watches a Flagger canary wait on its gate and promotes it with a reason', async ({ page }) => {
  test.setTimeout(300_000);
  await page.goto(APP);
  await signInAs(page, 'oncall');
  const canary = page.getByTestId('flagger-canary');
  await expect(canary).toHaveAttribute('data-phase', /Succeeded|Initialized|Failed/, { timeout: 120_000 });
  const note = `flagger e2e ${Date.now()}`;
  commitAndPush(`payments (${note})`, (w) => {
    for (const [p, c] of Object.entries(paymentsFiles(PAYMENTS_IMAGE, note, { gate: true }))) writeRepoFile(w, p, c);
  });
  // live: the analysis runs its iterations, then waits on the promotion gate
  await expect(canary).toHaveAttribute('data-phase', 'WaitingPromotion', { timeout: 180_000 });
  await expect(page.getByTestId('flagger-waiting')).toContainText('promotion gate');
  await expect(page.getByTestId('flagger-promote')).toBeDisabled();
  await page.getByTestId('flagger-reason').fill('payments canary looks good in the dashboards');
  await page.getByTestId('flagger-promote').click();
  await expect(page.getByTestId('flagger-done')).toContainText('promotion-gate');
  await expect(canary).toHaveAttribute('data-phase', 'Succeeded', { timeout: 120_000 });
  await page.screenshot({ path: 'test-results/flagger-promoted.png', fullPage: true });
  // the seed's files again (no gate: it promotes itself), so no later reset leaves a canary waiting for a person
  commitAndPush('payments back to the seed (flagger e2e)', (w) => {
    for (const [p, c] of Object.entries(paymentsFiles())) writeRepoFile(w, p, c);
  });
  await expect(canary).toHaveAttribute('data-phase', /Progressing|Succeeded/, { timeout: 60_000 });
});
