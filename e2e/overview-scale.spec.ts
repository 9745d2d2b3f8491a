// Issue 27's e2e: the overview at a few hundred apps (the bench carries the scale). 300 suspended Flux
// Kustomizations are added to dev on the nonprod cluster (their source does not exist, so no controller or
// recorder renders anything for them); a viewer's first paint is each group's first cards from a small first
// answer, "Show more" pages the group from the whole list, and search finds one app among them all.
import { expect, test } from '@playwright/test';
import { kubectl } from '../sandbox/state.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const N = 300;
const LABEL = 'gitops-console.dev/e2e-overview-scale';
const name = (i: number) => `many-${String(i).padStart(3, '0')}`;

test.beforeAll(() => {
  const items = Array.from({ length: N }, (_, i) => ({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: name(i), namespace: 'flux-system', labels: { env: 'dev', [LABEL]: 'true' } },
    spec: {
      interval: '60m',
      path: './none',
      prune: false,
      suspend: true,
      targetNamespace: 'dev',
      sourceRef: { kind: 'GitRepository', name: 'e2e-overview-scale-no-such-source' },
    },
  }));
  kubectl('nonprod', ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
});

// gone before the next spec starts (specs after this one count apps). One DELETE of the collection, then
// polled: `kubectl delete -l … --timeout` waits on each of the 300 objects through its client-side rate
// limiter, which refused at once in CI ("Wait(n=1) would exceed context deadline").
test.afterAll(async () => {
  kubectl('nonprod', [
    'delete',
    '--raw',
    `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations?labelSelector=${encodeURIComponent(`${LABEL}=true`)}`,
  ]);
  await expect
    .poll(
      () =>
        kubectl('nonprod', ['-n', 'flux-system', 'get', 'kustomizations', '-l', `${LABEL}=true`, '-o', 'name']).trim(),
      {
        timeout: 90_000,
        intervals: [500, 1_000, 2_000],
      },
    )
    .toBe('');
});

test('the overview at 300 more apps: a small first answer, "Show more" and search over every app', async ({ page }) => {
  test.setTimeout(180_000);
  const dev = page.locator('[data-env="dev"]');
  // the BFF lists them as its informers see them
  await expect
    .poll(
      async () => {
        const r = await page.request.get('/api/apps?env=dev');
        return ((await r.json()) as { apps: Array<{ name: string }> }).apps.filter((a) => a.name.startsWith('many-'))
          .length;
      },
      { timeout: 60_000 },
    )
    .toBe(N);

  const firstAnswer = page.waitForResponse((r) => /\/api\/apps\?first=\d+$/.test(r.url()));
  const whole = page.waitForResponse((r) => /\/api\/apps$/.test(r.url()));
  await page.goto('/');
  const head = (await (await firstAnswer).json()) as {
    partial?: boolean;
    apps: Array<{ env: string; cluster: string }>;
    groups: Array<{ env: string; cluster: string; count: number }>;
  };
  expect(head.partial).toBe(true);
  const devGroup = head.groups.find((g) => g.env === 'dev' && g.cluster === 'nonprod');
  const size = devGroup?.count ?? 0;
  expect(size).toBeGreaterThanOrEqual(N + 1);
  // the first answer carries 24 of the group, not 300
  expect(head.apps.filter((a) => a.env === 'dev' && a.cluster === 'nonprod')).toHaveLength(24);
  expect(((await (await whole).json()) as { apps: unknown[] }).apps.length).toBeGreaterThan(N);

  await expect(dev.getByTestId('app-card')).toHaveCount(24);
  const more = dev.getByTestId('show-more');
  await expect(more).toHaveText(`Show 240 more of ${size - 24} in dev · nonprod`);
  await more.click();
  await expect(dev.getByTestId('app-card')).toHaveCount(264);
  await expect(more).toHaveText(`Show ${size - 264} more of ${size - 264} in dev · nonprod`);
  await more.click();
  await expect(dev.getByTestId('app-card')).toHaveCount(size);
  await expect(more).toHaveCount(0);

  // search covers every app, not only the painted ones
  await page.getByLabel('Search apps').fill(name(217));
  await expect(page).toHaveURL(/q=many-217/);
  await expect(page.getByTestId('app-card')).toHaveCount(1);
  await expect(page.locator(`[data-app-id="nonprod/flux-system/kustomization/${name(217)}"]`)).toBeVisible();
  await expect(page.getByTestId('app-count')).toContainText('1 of');
  await page.screenshot({ path: 'test-results/overview-scale.png' });
});
