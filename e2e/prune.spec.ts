// Issue #9, first acceptance path, in Chromium against the real sandbox: a ConfigMap removed from Git
// (prod: Flux `prune: false`, so the console deletes) → the preview lists it → the requester cannot approve
// (button disabled with the reason) → a reviewer approves → it is deleted → the evidence shows the chain.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';
import { commitAndPush, requestReconcile, waitForKustomizationRevision, writeRepoFile } from '../sandbox/scenario.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: { cookies: [], origins: [] } });

const APP = '/apps/prod/flux-system/kustomization/digital-human-prod';
const OVERLAY = 'overlays/prod/kustomization.yaml';
const NAME = `e2e-prune-probe-${Date.now().toString(36)}`;
// the prod overlay as it was (the remove commit writes it back)
let original = '';

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test.beforeAll(async () => {
  test.setTimeout(600_000);
  const added = commitAndPush('e2e prune probe: add', (w) => {
    original = readFileSync(join(w, OVERLAY), 'utf8');
    writeRepoFile(
      w,
      'overlays/prod/e2e-prune-probe.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${NAME}\ndata:\n  a: "1"\n`,
    );
    writeRepoFile(w, OVERLAY, original.replace('  - ../../base\n', '  - ../../base\n  - e2e-prune-probe.yaml\n'));
  });
  await waitForKustomizationRevision('prod', 'digital-human-prod', added, 180_000);
  const removed = commitAndPush('e2e prune probe: remove from Git', (w) => {
    rmSync(join(w, 'overlays/prod/e2e-prune-probe.yaml'));
    writeRepoFile(w, OVERLAY, original);
  });
  await waitForKustomizationRevision('prod', 'digital-human-prod', removed, 180_000);
  requestReconcile('prod', 'gitrepository', 'digital-human');
});

test.afterAll(() => {
  kubectl('prod', ['-n', 'prod', 'delete', 'configmap', NAME, '--ignore-not-found', '--wait=false']);
});

test('remove a ConfigMap from Git → preview → the requester cannot approve → a reviewer approves → deleted', async ({
  page,
  browser,
}) => {
  await page.goto(APP);
  await signInAs(page, 'developer');
  await expect(page).toHaveURL(new RegExp(`${APP}$`));
  await page.getByTestId('preview-prune').click();
  await expect(page).toHaveURL(/\/prune-previews\/[0-9a-f-]{36}$/);
  const previewUrl = page.url();
  await expect(page.locator(`[data-testid="prune-candidate"][data-name="${NAME}"]`)).toBeVisible();
  await expect(page.getByTestId('prune-approve')).toBeDisabled();
  await expect(page.getByTestId('prune-approve-reason')).toContainText('approve this prune');

  const reviewer = await browser.newPage();
  await reviewer.goto(previewUrl);
  await signInAs(reviewer, 'admin');
  await reviewer.getByTestId('prune-comment').fill('removed from Git in the last release');
  await reviewer.getByTestId('prune-approve').click();
  await expect(reviewer.getByTestId('prune-status')).toHaveText('done', { timeout: 60_000 });
  expect(kubectl('prod', ['-n', 'prod', 'get', 'configmap', NAME, '--ignore-not-found', '-o', 'name']).trim()).toBe('');
  await expect(reviewer.getByTestId('prune-decisions')).toContainText('Approved by admin');
  await reviewer.close();
});
