// Issue 11 acceptance in Chromium against the real sandbox, as the on-call user: freeze the dev app (reason,
// 10 min) → the banner → a `kubectl edit` of render-worker replicas survives two reconcile intervals → the
// freeze page lists spec.replicas <git> → 12 by kubectl-edit → unfreeze with write-back → a branch
// freeze/<id> with a commit and a pull request on the sandbox forge (the repo Flux fetches) → automation
// restored, Flux reverts meanwhile (as the on-call was told) → a reviewer approves the PR and it is merged →
// Flux applies the merge commit: 12 replicas owned by kustomize-controller again → the evidence shows every
// step. Git and the cluster are put back afterwards.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/state.ts';
import { sleep, waitFor } from '../sandbox/procs.ts';
import {
  approvePullRequest,
  closePullRequest,
  commitAndPush,
  deleteBranch,
  getJson,
  kubectlEdit,
  mergePullRequest,
  openPullRequestFor,
  readRepoFile,
  repoHead,
  requestReconcile,
  waitForKustomizationRevision,
} from '../sandbox/scenario.ts';
import { as, signIn } from '../test/support/auth.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE_ONCALL });

const CLUSTER = 'nonprod';
const ENV = 'dev';
const KS = 'digital-human-dev';
const APP = `${CLUSTER}/flux-system/kustomization/${KS}`;
const OVERLAY = 'overlays/dev/kustomization.yaml';
const REASON = `e2e: render latency incident ${Date.now().toString(36)}`;

// render-worker's replicas in the dev overlay before the test (afterAll puts them back after the merge)
let gitReplicas = 0;
const REPLICAS_ENTRY = /(- name: render-worker\n\s+count: )(\d+)/;
let branch = '';

const replicas = () =>
  Number(kubectl(CLUSTER, ['-n', ENV, 'get', 'deployment', 'render-worker', '-o', 'jsonpath={.spec.replicas}']));
const kustomization = () => getJson(CLUSTER, ['-n', 'flux-system', 'get', 'kustomization', KS]);
/** The managers of render-worker's spec.replicas, from managedFields. */
function replicasManagers(): string[] {
  const d = getJson(CLUSTER, ['-n', ENV, 'get', 'deployment', 'render-worker']);
  const mf = ((d.metadata as Record<string, unknown>).managedFields ?? []) as Array<{
    manager: string;
    fieldsV1?: { 'f:spec'?: Record<string, unknown> };
  }>;
  return mf.filter((m) => m.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined).map((m) => m.manager);
}

const INCIDENT = 'https://status.example.com/incidents/42';

/** No axe violation of impact serious or critical (as e2e/a11y.spec.ts). */
async function expectAccessible(page: Page, name: string): Promise<void> {
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${name}: ${v.id} ${n.target.join(' ')} — ${n.failureSummary ?? v.help}`));
  expect(bad).toEqual([]);
}

/** Ends every active freeze of the dev app (a failed run's leftovers), letting Git win. */
async function endActiveFreezes(): Promise<void> {
  const base = process.env.E2E_BASE_URL as string;
  const oncall = await signIn(base, 'oncall');
  const r = await as(oncall, base, '/api/freezes?active=true');
  const list = (r.body as { freezes?: Array<{ id: string; targets: Array<{ appId: string }> }> }).freezes ?? [];
  for (const f of list.filter((x) => x.targets.some((t) => t.appId === APP))) {
    const e = await as(oncall, base, `/api/freezes/${f.id}/end`, { method: 'POST', body: { decisions: [] } });
    if (e.status !== 200) console.warn(`could not end freeze ${f.id}: ${e.status} ${e.text}`);
  }
}

test.beforeAll(async () => {
  test.setTimeout(300_000);
  await endActiveFreezes();
  gitReplicas = Number(REPLICAS_ENTRY.exec(readRepoFile(OVERLAY))?.[2]);
  expect(gitReplicas, 'the dev overlay sets render-worker replicas, not 12').toBeGreaterThan(0);
  expect(gitReplicas, 'the dev overlay sets render-worker replicas, not 12').not.toBe(12);
  // the app at rest: Flux has applied HEAD, so the live replicas are Git's
  await waitForKustomizationRevision(CLUSTER, KS, repoHead(), 180_000);
  await waitFor('render-worker at Git replicas', async () => replicas() === gitReplicas, { timeoutMs: 60_000 });
});

test.afterAll(async () => {
  test.setTimeout(300_000);
  await endActiveFreezes();
  // only the line the write-back changed, on the newest main (other tests may edit the overlay meanwhile)
  if (gitReplicas && REPLICAS_ENTRY.exec(readRepoFile(OVERLAY))?.[2] !== String(gitReplicas)) {
    const sha = commitAndPush('e2e freeze: restore the dev render-worker replicas', (w) => {
      const file = join(w, OVERLAY);
      writeFileSync(file, readFileSync(file, 'utf8').replace(REPLICAS_ENTRY, `$1${gitReplicas}`));
    });
    await waitForKustomizationRevision(CLUSTER, KS, sha, 180_000);
  }
  if (branch) {
    const pr = await openPullRequestFor(branch);
    if (pr) await closePullRequest(pr.number);
    deleteBranch(branch);
  }
});

test('freeze → a hand edit survives → unfreeze with write-back → merged → Flux applies it; evidence of every step', async ({
  page,
}) => {
  test.setTimeout(600_000);
  await page.goto(`/apps/${APP}`);
  await expect(page.getByTestId('stream-status')).toHaveText('updates: live');

  // freeze: reason and 10 minutes, through the dialog
  await page.getByTestId('freeze').click();
  const dialog = page.getByRole('dialog', { name: `Freeze ${KS}` });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByLabel(/^Reason/)).toBeFocused();
  await dialog.getByLabel(/^Reason/).fill(REASON);
  await dialog.getByLabel(/^Incident link/).fill(INCIDENT);
  await dialog.getByLabel('Duration').selectOption('custom');
  await dialog.getByLabel(/^Minutes/).fill('10');
  await expectAccessible(page, 'freeze dialog');
  await dialog.getByRole('button', { name: 'Freeze app' }).click();
  await expect(dialog).toBeHidden();

  // the banner (from App.freeze, live over the stream)
  const banner = page.getByTestId('freeze-banner');
  await expect(banner.getByTestId('freeze-banner-text')).toHaveText(
    new RegExp(`^Frozen by oncall: ${REASON} — (9|10) min( \\d+ s)? left$`),
  );
  const href = await banner.getByRole('link', { name: /Open the freeze/ }).getAttribute('href');
  const id = /\/freezes\/(frz-[0-9a-f]{8})$/.exec(href ?? '')?.[1] ?? '';
  expect(id, `freeze link ${href}`).not.toBe('');
  await expect(banner.getByRole('link', { name: `Incident: ${INCIDENT}` })).toHaveAttribute('href', INCIDENT);
  expect((kustomization().spec as Record<string, unknown>).suspend).toBe(true);
  await expect(page.getByTestId('automation')).toContainText('suspended');
  await expectAccessible(page, 'app page, frozen');
  // the overview marks the frozen app
  const overview = await page.context().newPage();
  await overview.goto('/');
  await expect(overview.locator(`[data-app-id="${APP}"]`).getByTestId('frozen')).toHaveText(
    /^❄Frozen until \d\d:\d\d:\d\d/,
  );
  await overview.close();

  // the incident: kubectl edit render-worker to 12; Flux does not revert it (two reconcile intervals of 15 s)
  kubectlEdit(CLUSTER, 'deployment/render-worker', ENV, { spec: { replicas: 12 } });
  requestReconcile(CLUSTER, 'kustomization', KS);
  await sleep(35_000);
  expect(replicas()).toBe(12);

  // the app page lists it (read-only), the freeze page decides
  const onApp = page.getByTestId('app-frozen-change').filter({ hasText: 'spec.replicas' });
  await expect(onApp).toContainText(`${gitReplicas} → 12`, { timeout: 30_000 });
  await expect(onApp).toContainText('by kubectl-edit');
  // the freeze page lists the live change
  await banner.getByRole('link', { name: /Open the freeze/ }).click();
  await expect(page).toHaveURL(new RegExp(`/freezes/${id}$`));
  await expect(page.getByTestId('freeze-status')).toHaveAttribute('data-status', 'active');
  await expect(page.getByTestId('freeze-reason-text')).toHaveText(REASON);
  const row = page.locator('[data-testid="freeze-change"][data-path="spec.replicas"][data-name="render-worker"]');
  await expect(row.getByTestId('freeze-change-values')).toHaveText(`${gitReplicas} → 12`, { timeout: 30_000 });
  await expect(row.getByTestId('freeze-change-manager')).toHaveText('kubectl-edit');
  await expect(row.getByLabel('Write back to Git')).toBeChecked();
  // anything else changed meanwhile (not this test's) is left to Git
  await expectAccessible(page, 'freeze page, active');
  await page.screenshot({ path: 'test-results/freeze-changes.png', fullPage: true });
  for (const other of await page.getByTestId('freeze-change').all()) {
    const mine =
      (await other.getAttribute('data-path')) === 'spec.replicas' &&
      (await other.getAttribute('data-name')) === 'render-worker';
    if (!mine) await other.getByLabel('Let Git win').check();
  }

  // unfreeze with write-back: the warning first
  await page.getByTestId('unfreeze').click();
  const confirm = page.getByRole('alertdialog', { name: 'Unfreeze?' });
  await expect(confirm.getByTestId('unfreeze-warning')).toContainText(
    'until that branch is merged the controller reverts it too',
  );
  await confirm.getByTestId('unfreeze-confirm').click();
  const result = page.getByTestId('write-back').filter({ hasText: KS });
  await expect(result.getByTestId('write-back-branch')).toHaveText(`freeze/${id}`, { timeout: 120_000 });
  branch = `freeze/${id}`;
  await expect(result.getByTestId('write-back-commit')).toHaveText(/^[0-9a-f]{7}$/);
  await expect(result.getByTestId('placement').first()).toContainText(OVERLAY);
  await expect(page.getByTestId('freeze-status')).toHaveAttribute('data-status', 'ended');
  await expect(page.getByTestId('freeze-restored')).toContainText(`${KS}: automation restored`);
  await page.screenshot({ path: 'test-results/freeze-ended.png', fullPage: true });

  // the branch holds 12 in the dev overlay
  expect(readRepoFile(OVERLAY, branch)).toMatch(/- name: render-worker\n\s+count: 12/);

  // the prior automation is restored, and Git wins until the branch is merged
  expect((kustomization().spec as Record<string, unknown>).suspend).not.toBe(true);
  requestReconcile(CLUSTER, 'kustomization', KS);
  await waitFor('Flux reverts the replicas', async () => replicas() === gitReplicas, { timeoutMs: 120_000 });

  // the write-back's pull request (opened by the console's bot user): a reviewer approves, a developer merges;
  // Flux applies the merge commit: 12, owned by the controller again
  const pr = await openPullRequestFor(branch);
  expect(pr, `an open pull request from ${branch}`).toMatchObject({ author: 'gitops-console', base: 'main' });
  await approvePullRequest(pr!.number, 'reviewer');
  const merged = await mergePullRequest(pr!.number, 'developer');
  if (!merged.ok) throw new Error(`merging PR ${pr!.number}: HTTP ${merged.status} ${merged.message}`);
  await waitForKustomizationRevision(CLUSTER, KS, merged.mergeCommit, 180_000);
  await waitFor('replicas 12 from Git', async () => replicas() === 12, { timeoutMs: 60_000 });
  expect(replicasManagers()).toEqual(['kustomize-controller']);

  // the evidence chain names every step: the evidence browser, searched for this freeze
  await page.goto(`/apps/${APP}`);
  await expect(page.getByTestId('freeze-banner')).toHaveCount(0);
  await page.goto(`/evidence?q=${id}`);
  const rows = page.getByTestId('evidence-row');
  for (const type of ['freeze.started', 'freeze.write-back', 'freeze.ended', 'freeze.restored'])
    await expect(rows.filter({ has: page.getByRole('cell', { name: type, exact: true }) })).toHaveCount(1);
  await page.screenshot({ path: 'test-results/freeze-evidence.png', fullPage: true });
});
