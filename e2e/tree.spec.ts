// Issue #4 in Chromium against the real sandbox: the resource tree.
import { expect, test, type Page } from '@playwright/test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectl } from '../sandbox/sandbox.ts';
import {
  commitAndPush,
  kubectlEdit,
  waitForDeploymentAvailable,
  requestReconcile,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../sandbox/scenario.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const FAIL_LABEL = 'pod-container-running-failed.stage.kwok.x-k8s.io';
const rows = (page: Page) => page.getByTestId('tree-row');
const row = (page: Page, kind: string, name?: string) =>
  page.locator(`[data-testid="tree-row"][data-kind="${kind}"]${name ? `[data-name="${name}"]` : ''}`);

test('dev render-worker: Deployment → ReplicaSet → Pods, Degraded with the reason when pods fail, then recovers', async ({
  page,
}) => {
  await page.goto('/apps/nonprod/flux-system/kustomization/digital-human-dev?tq=render-worker');
  await expect(page.getByTestId('resource-tree')).toBeVisible();
  await expect(row(page, 'Deployment', 'render-worker')).toHaveAttribute('data-health', 'Healthy');
  await expect(row(page, 'ReplicaSet').first()).toHaveAttribute('data-health', 'Healthy');
  for (const rs of await row(page, 'ReplicaSet').all()) await expect(rs).toHaveAttribute('data-health', 'Healthy');
  await expect(row(page, 'Pod')).toHaveCount(4);
  for (const p of await row(page, 'Pod').all()) await expect(p).toHaveAttribute('data-health', 'Healthy');
  await expect(row(page, 'Deployment', 'render-worker')).toHaveAttribute('data-sync', 'Synced');

  // an on-call engineer's edit makes kwok fail the new pods (kwok's chaos stage, selected by a pod label)
  kubectlEdit('nonprod', 'deployment/render-worker', 'dev', {
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
    await page.goto('/apps/nonprod/flux-system/kustomization/digital-human-dev?th=Degraded');
    const failed = row(page, 'Pod').filter({
      has: page.locator('[data-testid="tree-reason"]', { hasText: 'terminated: Error (exit 1)' }),
    });
    await expect(failed.first()).toBeVisible({ timeout: 60_000 });
    await expect(failed.first()).toHaveAttribute('data-health', 'Degraded');
    await page.screenshot({ path: 'test-results/tree-degraded.png', fullPage: true });
  } finally {
    kubectlEdit('nonprod', 'deployment/render-worker', 'dev', {
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
  await waitForDeploymentAvailable('nonprod', 'dev', 'render-worker');
  await expect(async () => {
    kubectl('nonprod', ['-n', 'dev', 'delete', 'pods', '-l', `${FAIL_LABEL}=true`, '--wait=false']);
    expect(kubectl('nonprod', ['-n', 'dev', 'get', 'pods', '-l', `${FAIL_LABEL}=true`, '-o', 'name']).trim()).toBe('');
  }).toPass({ timeout: 60_000 });
  await page.goto('/apps/nonprod/flux-system/kustomization/digital-human-dev?tq=render-worker');
  await expect(row(page, 'Deployment', 'render-worker')).toHaveAttribute('data-health', 'Healthy', { timeout: 90_000 });
  await expect(row(page, 'Pod').filter({ has: page.locator('[data-health="Degraded"]') })).toHaveCount(0);
  await expect(row(page, 'Pod')).toHaveCount(4, { timeout: 60_000 });
});

test('an object removed from Git stays live in prod (prune off) and shows as Extraneous', async ({ page }) => {
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: legacy-flags\ndata:\n  beta: "true"\n';
  // only in the prod overlay: dev and staging prune, and the console's admission policy denies a prune there
  // without an approved preview (their reconciles would then fail on it for every later test)
  const add = commitAndPush('Add legacy flags', (w) => {
    writeRepoFile(w, 'overlays/prod/legacy-flags.yaml', cm);
    const k = join(w, 'overlays/prod/kustomization.yaml');
    const text = readFileSync(k, 'utf8');
    if (!text.includes('legacy-flags.yaml'))
      writeFileSync(k, text.replace('resources:\n', 'resources:\n  - legacy-flags.yaml\n'));
  });
  await waitForKustomizationRevision('prod', 'digital-human-prod', add);
  const removed = commitAndPush('Remove legacy flags', (w) => {
    writeRepoFile(w, 'overlays/prod/legacy-flags.yaml', '');
    const k = join(w, 'overlays/prod/kustomization.yaml');
    writeFileSync(k, readFileSync(k, 'utf8').replace('  - legacy-flags.yaml\n', ''));
  });
  await waitForKustomizationRevision('prod', 'digital-human-prod', removed);
  requestReconcile('prod', 'kustomization', 'digital-human-prod');
  await page.goto('/apps/prod/flux-system/kustomization/digital-human-prod');
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
