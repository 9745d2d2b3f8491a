// Flux dependencies in Chromium (issue 26): infra-dev fails (its Kustomization pointed at a path that does not
// exist, by someone with kubectl); a developer reads on the app page that digital-human-dev is "waiting on
// infra-dev", sees the environment's dependency graph, and opens the dependency. Then infra is put back.
import { expect, test, type Page } from '@playwright/test';
import { requestReconcile, setKustomizationPath } from '../sandbox/scenario.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';

test.use({ baseURL: process.env.E2E_BASE_URL });

const DEV = '/apps/nonprod/flux-system/kustomization/digital-human-dev';

const setInfraPath = (path: string) => setKustomizationPath('nonprod', 'infra-dev', path);
const nudge = () => {
  requestReconcile('nonprod', 'kustomization', 'infra-dev');
  requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
};

/**
 * Waits until the page shows `n` "waiting on" lines, asking kustomize-controller to reconcile the app meanwhile
 * (as `flux reconcile` does). Only the app: a dependency asked every few seconds is always "reconciling", and Flux
 * holds its dependents meanwhile.
 */
async function waitingLines(page: Page, n: number) {
  await expect
    .poll(
      async () => {
        requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
        return page.getByTestId('waiting-on').count();
      },
      { timeout: 120_000, intervals: [3000] },
    )
    .toBe(n);
}

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('a developer reads "waiting on infra-dev" and opens the dependency', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto(DEV);
  await signInAs(page, 'developer');
  await expect(page.getByTestId('depends-on')).toContainText('infra-dev');
  await expect(page.getByTestId('waiting-on')).toHaveCount(0);
  setInfraPath('./infra/does-not-exist');
  requestReconcile('nonprod', 'kustomization', 'infra-dev');
  try {
    // kustomize-controller holds the app at its next reconcile (asked for now and then, as `flux reconcile` does)
    await waitingLines(page, 1);
    await expect(page.getByTestId('waiting-on')).toContainText(/waiting on infra-dev \(not Ready: /);
    await expect(page.getByTestId('depends-on')).toContainText('not Ready');
    await page.screenshot({ path: 'test-results/dependencies-waiting.png', fullPage: true });

    // the environment's graph: infra-dev first, not Ready; the app after it, waiting
    await page.getByRole('link', { name: 'environment dev' }).click();
    const graph = page.getByTestId('env-dependencies');
    await expect(graph).toBeVisible();
    const infraNode = graph.locator('[data-app-id="nonprod/flux-system/kustomization/infra-dev"]');
    await expect(infraNode).toContainText('not Ready');
    await expect(graph.locator('[data-app-id="nonprod/flux-system/kustomization/digital-human-dev"]')).toContainText(
      'waiting on infra-dev',
    );
    await graph.screenshot({ path: 'test-results/dependencies-graph.png' });
    await page.goBack();

    // open the dependency from the line
    await page.getByTestId('waiting-on-link').click();
    await expect(page).toHaveURL(/\/apps\/nonprod\/flux-system\/kustomization\/infra-dev$/);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('infra-dev');
    await expect(page.getByTestId('needed-by')).toContainText('digital-human-dev');
    await expect(page.getByTestId('needed-by')).toContainText('(waiting)');
  } finally {
    setInfraPath('./infra/dev');
    nudge();
  }
  // back to Git's path: the app is applied again and says nothing of waiting (only the app is asked again: a
  // dependency asked every few seconds is always "reconciling", and Flux holds its dependents meanwhile)
  await page.goto(DEV);
  await waitingLines(page, 0);
});
