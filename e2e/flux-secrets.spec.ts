// Secrets of a Flux estate in Chromium (issue 26): a developer opens infra-dev and sees its SOPS-encrypted Secret as
// Git holds it (recipient, MAC, keys encrypted in Git and present live, never a value) and the Secret the External
// Secrets Operator wrote, named under its ExternalSecret with the sync and the store's readiness, never read.
import { expect, test, type Page } from '@playwright/test';
import { TEST_PASSWORD } from '../test/support/auth.ts';

test.use({ baseURL: process.env.E2E_BASE_URL });

const INFRA = '/apps/nonprod/flux-system/kustomization/infra-dev';

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('a developer reads how infra-dev’s Secrets are held: SOPS in Git, written by External Secrets', async ({
  page,
}) => {
  await page.goto(INFRA);
  await signInAs(page, 'developer');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('infra-dev');
  // the tree: ExternalSecret → the Secret it wrote (named, never read)
  await page.getByRole('button', { name: 'expand all', exact: true }).click();
  const written = page.locator('[data-testid="tree-row"][data-kind="Secret"][data-name="render-api-key"]');
  await expect(written.getByTestId('tree-reason')).toContainText('written by external-secrets: SecretSynced', {
    timeout: 60_000,
  });
  await expect(written.getByTestId('tree-reason')).toContainText('from SecretStore platform-secrets (Ready)');
  await expect(
    page.locator('[data-testid="tree-row"][data-kind="ExternalSecret"][data-name="render-api-key"]'),
  ).toHaveAttribute('data-health', 'Healthy');
  // the diff: the encrypted Secret as Git holds it, keys compared, values never shown
  await page.getByLabel('show unchanged objects').check();
  const enc = page.locator('[data-testid="object-diff"][data-kind="Secret"][data-name="db-credentials"]');
  await expect(enc.getByTestId('secret-encryption')).toContainText(
    /encrypted in Git \(SOPS 3\.13\.3, age recipient age1.*MAC present\)/,
  );
  await expect(enc.getByTestId('secret-encryption')).toContainText('infra/dev/db-credentials.sops.yaml');
  await expect(enc.locator('[data-testid="secret-key"][data-key="DB_PASSWORD"]')).toContainText('encrypted');
  await expect(enc.locator('[data-testid="secret-key"][data-key="DB_PASSWORD"]')).toContainText('present');
  await expect(page.getByTestId('plaintext-secrets')).toHaveCount(0);
  await enc.screenshot({ path: 'test-results/flux-secrets-sops.png' });
});
