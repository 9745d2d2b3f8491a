// Issue #4 in Chromium against the real sandbox: the resource tree. The failing pods are on the spec's own dev
// estate and the Extraneous object on its own prod estate (test/support/own-estate.ts, prod-probe-estate.ts: Flux
// `prune: false` like the seed's prod); the filters, keyboard and drawer only read the seed's dev app.
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';
import { kubectlEdit, requestReconcile, waitForDeploymentAvailable } from '../sandbox/scenario.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../test/support/own-estate.ts';
import { prodProbeEstate, type ProdProbeEstate } from '../test/support/prod-probe-estate.ts';
import { consoleShows } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

let dev: Estate | undefined;
let prod: ProdProbeEstate | undefined;
const devEstate = () => dev as Estate;
const prodEstate = () => prod as ProdProbeEstate;

test.beforeAll(async () => {
  test.setTimeout(420_000);
  // both at once: each waits on its own controllers
  const [d, p] = await Promise.allSettled([
    ownEstate({ name: 'e2e-tree', env: 'dev', files: digitalHumanTemplate('dev') }),
    // legacy-flags in the first commit, applied; the second takes it out of Git (prune off: it stays live)
    prodProbeEstate({ name: 'e2e-tree', probes: ['legacy-flags'] }),
  ]);
  if (d.status === 'fulfilled') dev = d.value;
  if (p.status === 'fulfilled') prod = p.value;
  if (d.status === 'rejected') throw d.reason;
  if (p.status === 'rejected') throw p.reason;
  await consoleShows(devEstate().appId(), { env: 'dev', sha: devEstate().seedCommit });
  await consoleShows(prodEstate().app, { env: 'prod', sha: prodEstate().removed });
});

test.afterAll(async () => {
  test.setTimeout(240_000);
  await Promise.all([dev?.teardown(), prod?.teardown()]);
});

const FAIL_LABEL = 'pod-container-running-failed.stage.kwok.x-k8s.io';
const rows = (page: Page) => page.getByTestId('tree-row');
const row = (page: Page, kind: string, name?: string) =>
  page.locator(`[data-testid="tree-row"][data-kind="${kind}"]${name ? `[data-name="${name}"]` : ''}`);

test('dev render-worker: Deployment → ReplicaSet → Pods, Degraded with the reason when pods fail, then recovers', async ({
  page,
}) => {
  const { cluster, namespace } = devEstate();
  const APP = `/apps/${devEstate().appId()}`;
  await page.goto(`${APP}?tq=render-worker`);
  await expect(page.getByTestId('resource-tree')).toBeVisible();
  await expect(row(page, 'Deployment', 'render-worker')).toHaveAttribute('data-health', 'Healthy');
  await expect(row(page, 'ReplicaSet').first()).toHaveAttribute('data-health', 'Healthy');
  for (const rs of await row(page, 'ReplicaSet').all()) await expect(rs).toHaveAttribute('data-health', 'Healthy');
  await expect(row(page, 'Pod')).toHaveCount(4);
  for (const p of await row(page, 'Pod').all()) await expect(p).toHaveAttribute('data-health', 'Healthy');
  await expect(row(page, 'Deployment', 'render-worker')).toHaveAttribute('data-sync', 'Synced');

  // an on-call engineer's edit makes kwok fail the new pods (kwok's chaos stage, selected by a pod label)
  kubectlEdit(cluster, 'deployment/render-worker', namespace, {
    spec: {
      template: {
        metadata: {
          labels: { [FAIL_LABEL]: 'true' },
          annotations: { [`${FAIL_LABEL}/reason`]: 'Error', [`${FAIL_LABEL}/message`]: 'render worker lost its GPU' },
        },
      },
    },
  });
  try {
    await page.goto(`${APP}?th=Degraded`);
    const failed = row(page, 'Pod').filter({
      has: page.locator('[data-testid="tree-reason"]', { hasText: 'terminated: Error (exit 1)' }),
    });
    await expect(failed.first()).toBeVisible({ timeout: 60_000 });
    await expect(failed.first()).toHaveAttribute('data-health', 'Degraded');
    await page.screenshot({ path: 'test-results/tree-degraded.png', fullPage: true });
  } finally {
    kubectlEdit(cluster, 'deployment/render-worker', namespace, {
      spec: {
        template: {
          metadata: {
            labels: { [FAIL_LABEL]: null },
            annotations: { [`${FAIL_LABEL}/reason`]: null, [`${FAIL_LABEL}/message`]: null },
          },
        },
      },
    });
  }
  // Failed pods are not removed by a scale-down; once the rollback is complete, on-call cleans them up
  await waitForDeploymentAvailable(cluster, namespace, 'render-worker');
  await expect(async () => {
    kubectl(cluster, ['-n', namespace, 'delete', 'pods', '-l', `${FAIL_LABEL}=true`, '--wait=false']);
    expect(kubectl(cluster, ['-n', namespace, 'get', 'pods', '-l', `${FAIL_LABEL}=true`, '-o', 'name']).trim()).toBe(
      '',
    );
  }).toPass({ timeout: 60_000 });
  await page.goto(`${APP}?tq=render-worker`);
  await expect(row(page, 'Deployment', 'render-worker')).toHaveAttribute('data-health', 'Healthy', { timeout: 90_000 });
  await expect(row(page, 'Pod').filter({ has: page.locator('[data-health="Degraded"]') })).toHaveCount(0);
  await expect(row(page, 'Pod')).toHaveCount(4, { timeout: 60_000 });
});

test('an object removed from Git stays live in prod (prune off) and shows as Extraneous', async ({ page }) => {
  // the estate's prod app added legacy-flags and took it out of Git again (beforeAll); Flux applied both commits
  const { estate } = prodEstate();
  expect(prodEstate().isLive('legacy-flags')).toBe(true);
  requestReconcile(estate.cluster, 'kustomization', estate.kustomization());
  await page.goto(`/apps/${prodEstate().app}`);
  const r = row(page, 'ConfigMap', 'legacy-flags');
  await expect(r).toHaveAttribute('data-sync', 'Extraneous');
  await expect(r.getByTestId('tree-reason')).toContainText('no longer in Git');
  await expect(page.getByTestId('tree-summary')).toContainText('1 Extraneous');
});

test('tree filters live in the URL; expand all problems; keyboard navigation; details drawer with field managers', async ({
  page,
}) => {
  await page.goto('/apps/nonprod/flux-system/kustomization/digital-human-dev');
  await page.getByLabel('Resource kind').selectOption('Service');
  await expect(page).toHaveURL(/tk=Service/);
  await expect(rows(page)).toHaveCount(3);
  await page
    .getByRole('button', { name: 'collapse' })
    .first()
    .click()
    .catch(() => undefined);
  await page.getByLabel('Resource kind').selectOption('');
  await page.getByRole('button', { name: 'collapse', exact: true }).last().click();
  await page.getByRole('button', { name: 'expand all problems' }).click();
  // healthy at rest (the HPA has the sandbox's metrics API): no row is a problem
  await expect(row(page, 'HorizontalPodAutoscaler')).toHaveAttribute('data-health', 'Healthy');
  await expect(page.locator('[data-testid="tree-row"][data-health="Degraded"]')).toHaveCount(0);
  const tree = page.getByTestId('tree-scroller');
  await tree.focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('[data-testid="tree-row"][aria-selected="true"]')).toHaveCount(1);
  await row(page, 'Service', 'tts-gateway').getByRole('button', { name: 'tts-gateway' }).click();
  const drawer = page.getByTestId('node-drawer');
  await expect(drawer.getByTestId('live-yaml')).toContainText('load-balancer-id');
  await drawer.getByRole('button', { name: 'Field managers' }).click();
  await expect(drawer.getByTestId('field-managers')).toContainText('cloud-lb-controller');
  await expect(drawer.getByTestId('field-managers')).toContainText('kustomize-controller');
  await expect(drawer.getByTestId('field-managers')).toContainText(
    'metadata.annotations["service.beta.kubernetes.io/load-balancer-id"]',
  );
  await drawer.getByRole('button', { name: 'Close' }).click();
  // the closed drawer leaves the URL (written back debounced) before the next navigation
  await expect(page).not.toHaveURL(/[?&]node=/);
  await page.getByRole('button', { name: 'graph view' }).click();
  await expect(page).toHaveURL(/view=graph/);
  await expect(page.getByTestId('graph-box').first()).toBeVisible();
});
