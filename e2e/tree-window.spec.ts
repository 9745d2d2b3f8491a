// Issue 27 in Chromium against the real sandbox: the windowed resource tree a 100,000-object app gets. The e2e
// load is small, so the page asks for windows of 2 (?tw=2): the same code paths as 200 per window at scale.
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

const DEV = '/apps/nonprod/flux-system/kustomization/digital-human-dev';
const row = (page: Page, kind: string, name?: string) =>
  page.locator(`[data-testid="tree-row"][data-kind="${kind}"]${name ? `[data-name="${name}"]` : ''}`);
const moreUnder = (page: Page, parent: string) =>
  page.locator(`[data-testid="tree-more"][data-parent="${parent}"]`).getByRole('button');

test('a windowed tree: roots a window at a time, children loaded on expand, a filter the BFF answers, live pods', async ({
  page,
}) => {
  await page.goto(`${DEV}?tw=2`);
  const note = page.getByTestId('tree-window-note');
  await expect(note).toContainText(/A large tree: \d+ of \d+ objects are loaded/);
  await page.getByRole('button', { name: 'collapse', exact: true }).last().click();
  const top = page.locator('[data-testid="tree-row"][aria-level="1"]');
  await expect(top).toHaveCount(2);
  // "Show more" at the roots: the next two in the tree's order each time (one may be a root the first window
  // showed as a problem: it is not shown twice), until the render-worker Deployment is in the view
  await moreUnder(page, '').click();
  await expect.poll(() => top.count()).toBeGreaterThan(2);
  const deployment = row(page, 'Deployment', 'render-worker');
  await expect(async () => {
    if (!(await deployment.count())) await moreUnder(page, '').click({ timeout: 2000 });
    await expect(deployment).toBeVisible({ timeout: 2000 });
  }).toPass({ timeout: 60_000 });
  const deploymentId = (await deployment.getAttribute('data-node-id')) as string;

  // its ReplicaSets came with it (two per window); the one with Pods has none loaded until it is expanded
  await deployment.getByRole('button', { name: 'expand' }).click();
  const rsWithPods = row(page, 'ReplicaSet').and(page.locator('[aria-expanded="false"]'));
  await expect(async () => {
    if (!(await rsWithPods.count())) await moreUnder(page, deploymentId).click({ timeout: 2000 });
    await expect(rsWithPods.first()).toBeVisible({ timeout: 2000 });
  }).toPass({ timeout: 30_000 });
  const rs = rsWithPods.first();
  const rsId = (await rs.getAttribute('data-node-id')) as string;
  const podsOf = page.locator(`[data-testid="tree-row"][data-kind="Pod"][aria-level="3"]`);
  await expect(podsOf).toHaveCount(0);
  await rs.getByRole('button', { name: 'expand' }).click();
  const more = page.locator(`[data-testid="tree-more"][data-parent="${rsId}"]`);
  await expect(podsOf.first()).toBeVisible();
  // the ReplicaSet's Pods (the HPA decides how many): two now, the rest two at a time
  const pods = await (async () => {
    if (!(await more.count())) return podsOf.count();
    const m = /more of (\d+)/.exec((await more.getAttribute('aria-label')) ?? '');
    return Number(m?.[1]);
  })();
  expect(pods).toBeGreaterThan(2);
  await expect(podsOf).toHaveCount(2);
  await expect(more).toHaveAttribute('aria-label', new RegExp(`show 2 more \\(${pods - 2} more of ${pods}\\)`));
  await expect(async () => {
    if (await more.count()) await moreUnder(page, rsId).click({ timeout: 2000 });
    await expect(more).toHaveCount(0, { timeout: 2000 });
  }).toPass({ timeout: 30_000 });
  await expect(podsOf).toHaveCount(pods);

  // someone deletes a Pod with kubectl: the loaded windows follow (the Pod goes, its replacement comes)
  const victim = (await podsOf.first().getAttribute('data-name')) as string;
  kubectl('nonprod', ['-n', 'dev', 'delete', 'pod', victim, '--wait=false']);
  await expect(row(page, 'Pod', victim)).toHaveCount(0, { timeout: 60_000 });
  await expect(podsOf).toHaveCount(pods, { timeout: 60_000 });

  // a filter searches the whole tree on the BFF, not the loaded windows: every render-worker Pod is found
  await page.getByRole('button', { name: 'collapse', exact: true }).last().click();
  await page.getByLabel('Filter resources').fill('render-worker');
  await expect(page).toHaveURL(/tq=render-worker/);
  await expect(note).toContainText(/\d+ of \d+ objects match/);
  await expect(row(page, 'Pod')).toHaveCount(pods);
  for (const p of await row(page, 'Pod').all()) await expect(p).toHaveAttribute('data-name', /^render-worker-/);
  await page.getByLabel('Filter resources').fill('no-such-object-anywhere');
  await expect(page.getByTestId('tree-empty')).toBeVisible();
  await expect(note).toContainText('0 of');
});
