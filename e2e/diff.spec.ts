// Issue #5 in Chromium against the real sandbox: Git versus live, every field naming its owner.
// The hand-edit journey runs on the spec's own estate (test/support/own-estate.ts: the seed's dev service in a
// namespace of its own, mapped to dev); the environment comparison only reads the seed's digital-human apps.
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';
import { PROD_RENDER_WORKER_DIGEST } from '../sandbox/seed.ts';
import { incidentEditRenderWorker, scaleAsController, setSuspended, suspendSettled } from '../sandbox/scenario.ts';
import { fluxReconciled } from '../test/support/flux.ts';
import { specEstate } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const own = specEstate('e2e-diff', 'dev');

const renderWorkerReplicas = () =>
  (
    JSON.parse(kubectl(own().cluster, ['-n', own().namespace, 'get', 'deployment/render-worker', '-o', 'json'])) as {
      spec: { replicas: number };
    }
  ).spec.replicas;

const fieldRow = (page: Page, path: string) => page.locator(`[data-testid="field-row"][data-path="${path}"]`);

test('kubectl-edit drift shows Git vs live with the kubectl-edit badge; a controller conflict gets a fix; Flux reverts and the diff clears', async ({
  page,
}) => {
  const { cluster, namespace } = own();
  const ks = own().kustomization();
  // hold Flux still while we look (what an on-call freeze does), so the drift stays visible: suspended, and no
  // reconcile still in flight that could apply Git over the edit
  await suspendSettled(cluster, ks);
  try {
    incidentEditRenderWorker(cluster, namespace);
    expect(renderWorkerReplicas()).toBe(12);
    await page.goto(`/apps/${own().appId()}`);
    const replicas = fieldRow(page, 'spec.replicas');
    await expect(replicas).toHaveAttribute('data-class', 'drift');
    await expect(replicas).toContainText('4');
    await expect(replicas).toContainText('12');
    await expect(replicas.getByTestId('owner-badge')).toHaveText('kubectl-edit');
    await expect(replicas.getByTestId('owner-badge')).toHaveAttribute('title', /kubectl-edit: Update at /);
    const env = fieldRow(page, 'spec.template.spec.containers[name=render].env[name=DEBUG_TRACE].value');
    await expect(env).toHaveAttribute('data-class', 'drift');
    await expect(env.getByTestId('owner-badge')).toHaveText('kubectl-edit');
    await expect(page.getByTestId('diff-summary')).toContainText('2 fields drifted, written by kubectl-edit');
    await expect(page.getByTestId('render-info')).toContainText('flux-render github.com/fluxcd/pkg/kustomize');
    // side-by-side in monaco, with the owner badge on the changed line
    const obj = page.locator('[data-testid="object-diff"][data-name="render-worker"][data-kind="Deployment"]');
    await obj.getByRole('button', { name: 'side-by-side' }).click();
    // the badge is an inline decoration on the live line that kubectl-edit wrote
    const line = obj.getByTestId('monaco-diff').locator('.editor.modified .view-line', { hasText: 'replicas: 12' });
    await expect(line.locator('.owner-badge-drift')).toHaveText('⟵ kubectl-edit · drift');

    // an HPA-style controller writes spec.replicas through /scale: a conflict, with a ready fix
    scaleAsController(cluster, 'render-worker', namespace, 7);
    await page.getByRole('button', { name: 'refresh' }).click();
    await expect(replicas).toHaveAttribute('data-class', 'conflict');
    await expect(replicas.getByTestId('owner-badge')).toHaveText('kube-controller-manager');
    await expect(replicas.getByTestId('owner-badge')).toHaveAttribute('title', /on \/scale/);
    await replicas.getByText('suggested fix').click();
    await expect(replicas.getByTestId('fix-snippet')).toContainText('kustomize.toolkit.fluxcd.io/ssa: IfNotPresent');
  } finally {
    setSuspended(cluster, ks, false);
  }
  // Flux applies Git again (only this spec pushes to the estate: its first commit) and takes the fields back
  await expect(async () => {
    await fluxReconciled(cluster, ks);
    expect(renderWorkerReplicas()).toBe(4);
  }).toPass({ timeout: 90_000 });
  await page.getByRole('button', { name: 'refresh' }).click();
  await expect(page.getByTestId('diff-summary')).toHaveText('no differences: live matches Git');
});

test('environment comparison: images per env, digest-pinned in prod, mutable tag in dev; ownership map lists the cloud controller', async ({
  page,
}) => {
  await page.goto('/apps/prod/flux-system/kustomization/digital-human-prod');
  const img = page.locator(
    '[data-testid="env-image"][data-object="Deployment render-worker"][data-container="render"]',
  );
  await expect(img.locator('[data-env="prod"]')).toHaveAttribute('data-pinned', 'digest');
  await expect(img.locator('[data-env="prod"]')).toContainText(`@${PROD_RENDER_WORKER_DIGEST.slice(0, 15)}`);
  await expect(img.locator('[data-env="dev"]')).toHaveAttribute('data-pinned', 'tag');
  await expect(img.locator('[data-env="dev"]')).toContainText(':1.5.0-rc.1');
  await expect(img.locator('[data-env="staging"]')).toContainText(':1.4.2');
  // the Service annotation written by the cloud controller: its own manager in the ownership map
  await expect(page.locator('[data-testid="ownership-row"][data-manager="cloud-lb-controller"]')).toBeVisible();
  await expect(page.locator('[data-testid="ownership-row"][data-manager="kustomize-controller"]')).toBeVisible();
});
