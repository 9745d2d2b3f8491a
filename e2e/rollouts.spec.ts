// Argo Rollouts in Chromium (issue 25): an on-call watches a canary progress on the app page (its steps, its
// weight, why it is paused) and aborts it with a reason; the release chain shows the release failed by its canary
// with the canary's steps; the evidence browser shows the action with its reason.
// The Rollout is the spec's own `checkout` (test/support/rollout-estate.ts: the seed's checkout app in its own
// repository, Argo CD Application and staging namespace, its business check against its own business endpoint, a
// SIMULATION), reconciled by Argo CD and rolled out by the real Argo Rollouts controller; the seed's is only read.
import { expect, test, type Page } from '@playwright/test';
import { CHECKOUT_IMAGE } from '../sandbox/seed.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';
import { rolloutEstate, type RolloutEstate } from '../test/support/rollout-estate.ts';
import { consoleShows } from './support/estate.ts';

let co: RolloutEstate | undefined;

test.beforeAll(async () => {
  test.setTimeout(300_000);
  co = await rolloutEstate('rollouts-e2e');
  await consoleShows(co.app, { env: 'staging' });
});
// the estate goes with its Rollout: nothing to restore
test.afterAll(async () => {
  test.setTimeout(180_000);
  await co?.teardown();
});

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('an on-call watches a canary progress and aborts it with a reason; the evidence shows it', async ({ page }) => {
  test.setTimeout(300_000);
  if (!co) throw new Error('the rollouts estate was not made (its beforeAll failed)');
  const ns = co.namespace;
  await page.goto(`/apps/${co.app}`);
  await signInAs(page, 'oncall');
  const ro = page.getByTestId('rollout');
  await expect(ro).toHaveAttribute('data-phase', 'Healthy', { timeout: 120_000 });
  // the seed's pauses (30 s, then 10 s): the abort comes within the first
  await co.commit(CHECKOUT_IMAGE.replace(':0.9.3', ':0.9.2'));
  // live: the canary at 20 %, paused on its pause step
  await expect(ro).toHaveAttribute('data-weight', '20', { timeout: 120_000 });
  await expect(page.getByTestId('rollout-paused')).toContainText('CanaryPauseStep', { timeout: 60_000 });
  await expect(page.locator('[data-testid="rollout-step"][data-state="done"]')).toHaveCount(1);
  // no reason, no action
  await expect(page.getByTestId('rollout-abort')).toBeDisabled();
  await page.getByTestId('rollout-reason').fill('checkout errors in the canary pod logs');
  await page.getByTestId('rollout-abort').click();
  await expect(page.getByTestId('rollout-phase')).toContainText('aborted', { timeout: 60_000 });
  await expect(ro).toHaveAttribute('data-phase', 'Degraded');
  await page.screenshot({ path: 'test-results/rollout-aborted.png', fullPage: true });
  // the release chain: this release's verification is the aborted canary, its steps listed under it
  const newest = page.getByTestId('release').first();
  const verification = newest.locator('[data-testid="release-state"][data-state="verification"]');
  await expect(async () => {
    await page.reload();
    await expect(verification).toHaveAttribute('data-status', 'failed', { timeout: 5000 });
  }).toPass({ timeout: 150_000 });
  await expect(verification).toContainText(`canary ${ns}/checkout aborted`);
  await newest.getByTestId('release-canary').locator('summary').click();
  await expect(newest.locator('[data-testid="release-canary-step"][data-state="aborted"]')).toHaveCount(1);
  await expect(newest.getByTestId('release-canary-step').first()).toContainText(`Rollout ${ns}/checkout`);
  await page.goto('/evidence?q=checkout%20errors');
  const rows = page.getByTestId('evidence-row');
  await expect(rows.filter({ has: page.getByRole('cell', { name: 'rollout.control', exact: true }) })).toHaveCount(1);
});
