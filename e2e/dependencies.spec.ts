// Flux dependencies in Chromium (issue 26): infra-dev fails (its Kustomization pointed at a path that does not
// exist, by someone with kubectl); a developer reads on the app page that digital-human-dev is "waiting on
// infra-dev", sees the environment's dependency graph, and opens the dependency. Then infra is put back.
// On the spec's own estate (test/support/own-estate.ts, the seed's shape: its app after its infra, in a namespace
// of its own mapped to dev); the estate is deleted at the end.
import { expect, test, type Page } from '@playwright/test';
import { requestReconcile, setKustomizationPath } from '../sandbox/scenario.ts';
import { infraFiles } from '../sandbox/seed.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../test/support/own-estate.ts';
import { consoleShows } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL });

let estate: Estate | undefined;
const own = () => estate as Estate;
/** the estate's app and its infra: their Kustomizations' names (the app's is what the seed's digital-human-dev was) */
const appName = () => own().kustomization('app');
const infraName = () => own().kustomization('infra');

const setInfraPath = (path: string) => setKustomizationPath(own().cluster, infraName(), path);
const nudge = () => {
  requestReconcile(own().cluster, 'kustomization', infraName());
  requestReconcile(own().cluster, 'kustomization', appName());
};

test.beforeAll(async () => {
  test.setTimeout(300_000);
  // the seed's dev platform objects (a ConfigMap and a NetworkPolicy) as the infra the app depends on
  const infra = infraFiles()['infra/dev/platform.yaml'] as string;
  estate = await ownEstate({
    name: 'e2e-deps',
    env: 'dev',
    files: { ...digitalHumanTemplate('dev'), 'infra/dev/platform.yaml': infra },
    apps: [
      { name: 'infra', path: 'infra/dev' },
      { name: 'app', path: 'overlays/dev', dependsOn: ['infra'] },
    ],
  });
  await consoleShows(estate.appId('infra'), { env: 'dev', sha: estate.seedCommit });
  await consoleShows(estate.appId('app'), { env: 'dev', sha: estate.seedCommit });
});

test.afterAll(async () => {
  test.setTimeout(180_000);
  await estate?.teardown();
});

/**
 * Waits until the page shows `n` "waiting on" lines, asking kustomize-controller to reconcile the app meanwhile
 * (as `flux reconcile` does). Only the app: a dependency asked every few seconds is always "reconciling", and Flux
 * holds its dependents meanwhile.
 */
async function waitingLines(page: Page, n: number) {
  await expect
    .poll(
      async () => {
        requestReconcile(own().cluster, 'kustomization', appName());
        return page.getByTestId('waiting-on').count();
      },
      { timeout: 120_000, intervals: [2000] },
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
  const DEV = `/apps/${own().appId('app')}`;
  const INFRA = infraName();
  await page.goto(DEV);
  await signInAs(page, 'developer');
  await expect(page.getByTestId('depends-on')).toContainText(INFRA);
  await expect(page.getByTestId('waiting-on')).toHaveCount(0);
  setInfraPath('./infra/does-not-exist');
  requestReconcile(own().cluster, 'kustomization', INFRA);
  try {
    // kustomize-controller holds the app at its next reconcile (asked for now and then, as `flux reconcile` does)
    await waitingLines(page, 1);
    await expect(page.getByTestId('waiting-on')).toContainText(new RegExp(`waiting on ${INFRA} \\(not Ready: `));
    await expect(page.getByTestId('depends-on')).toContainText('not Ready');
    await page.screenshot({ path: 'test-results/dependencies-waiting.png', fullPage: true });

    // the environment's graph: infra-dev first, not Ready; the app after it, waiting
    await page.getByRole('link', { name: 'environment dev' }).click();
    const graph = page.getByTestId('env-dependencies');
    await expect(graph).toBeVisible();
    const infraNode = graph.locator(`[data-app-id="${own().appId('infra')}"]`);
    await expect(infraNode).toContainText('not Ready');
    await expect(graph.locator(`[data-app-id="${own().appId('app')}"]`)).toContainText(`waiting on ${INFRA}`);
    await graph.screenshot({ path: 'test-results/dependencies-graph.png' });
    await page.goBack();

    // open the dependency from the line
    await page.getByTestId('waiting-on-link').click();
    await expect(page).toHaveURL(new RegExp(`/apps/${own().appId('infra')}$`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(INFRA);
    await expect(page.getByTestId('needed-by')).toContainText(appName());
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
