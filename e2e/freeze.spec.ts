// Issue 11 acceptance in Chromium against the real sandbox, as the on-call user: freeze the dev app (reason,
// 10 min) → the banner → a `kubectl edit` of render-worker replicas survives two reconcile intervals → the
// freeze page lists spec.replicas <git> → 12 by kubectl-edit → unfreeze with write-back → a branch
// freeze/<id> with a commit and a pull request on the sandbox forge (the repo Flux fetches) → automation
// restored, Flux reverts meanwhile (as the on-call was told) → a reviewer approves the PR and it is merged →
// Flux applies the merge commit: 12 replicas owned by kustomize-controller again → the evidence shows every
// step. On the spec's own estate (test/support/own-estate.ts: the seed's dev service in a namespace of its own,
// mapped to dev, its overlay declaring that namespace as Git's own — the write-back places a live change by it);
// the write-back's branch and pull request are on the estate's repository, deleted with it at the end.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/state.ts';
import { waitFor } from '../sandbox/procs.ts';
import {
  approvePullRequest,
  getJson,
  kubectlEdit,
  mergePullRequest,
  openPullRequestFor,
  readRepoFile,
  requestReconcile,
} from '../sandbox/scenario.ts';
import { as, signIn } from '../test/support/auth.ts';
import { reconcileHandled } from '../test/support/freeze-sandbox.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../test/support/own-estate.ts';
import { consoleShows } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE_ONCALL });

const OVERLAY = 'overlays/dev/kustomization.yaml';
const REASON = `e2e: render latency incident ${Date.now().toString(36)}`;

let estate: Estate | undefined;
const own = () => estate as Estate;
let CLUSTER = '';
let ENV = '';
let KS = '';
let APP = '';
// render-worker's replicas in the estate's dev overlay (its first commit)
let gitReplicas = 0;
const REPLICAS_ENTRY = /(- name: render-worker\n\s+count: )(\d+)/;

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

/** Ends every active freeze of the estate's app (a failed run's), letting Git win. */
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
  const template = digitalHumanTemplate('dev');
  const overlay = template[OVERLAY] ?? '';
  expect(overlay, `${OVERLAY} of the seed declares namespace dev`).toMatch(/^namespace: dev$/m);
  estate = await ownEstate({
    name: 'e2e-freeze',
    env: 'dev',
    files: template,
    namedFiles: ({ namespace }) => ({ [OVERLAY]: overlay.replace(/^namespace: dev$/m, `namespace: ${namespace}`) }),
  });
  CLUSTER = estate.cluster;
  ENV = estate.namespace;
  KS = estate.kustomization();
  APP = estate.appId();
  gitReplicas = Number(REPLICAS_ENTRY.exec(readRepoFile(OVERLAY, 'main', estate.state))?.[2]);
  expect(gitReplicas, 'the dev overlay sets render-worker replicas, not 12').toBeGreaterThan(0);
  expect(gitReplicas, 'the dev overlay sets render-worker replicas, not 12').not.toBe(12);
  // the app at rest: Flux has applied the first commit, so the live replicas are Git's
  await waitFor('render-worker at Git replicas', async () => replicas() === gitReplicas, { timeoutMs: 60_000 });
  await consoleShows(APP, { env: 'dev', sha: estate.seedCommit });
});

test.afterAll(async () => {
  test.setTimeout(300_000);
  try {
    if (APP) await endActiveFreezes();
  } finally {
    // its repository (the write-back's branch and pull request with it), app and namespace
    await estate?.teardown();
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
  // the freeze page says when kustomize-controller handled the suspend: from then on no reconcile it began before
  // the freeze can revert the edit
  const detail = await page.context().newPage();
  await detail.goto(`/freezes/${id}`);
  await expect(detail.getByTestId('freeze-pause-confirmed')).toContainText('the controller handled the suspend', {
    timeout: 30_000,
  });
  await detail.close();

  // the incident: kubectl edit render-worker to 12; Flux does not revert it (two reconciles kustomize-controller
  // handled while frozen: a suspended Kustomization records the request and applies nothing)
  kubectlEdit(CLUSTER, 'deployment/render-worker', ENV, { spec: { replicas: 12 } });
  await reconcileHandled(CLUSTER, KS);
  await reconcileHandled(CLUSTER, KS);
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
  const branch = `freeze/${id}`;
  await expect(result.getByTestId('write-back-commit')).toHaveText(/^[0-9a-f]{7}$/);
  await expect(result.getByTestId('placement').first()).toContainText(OVERLAY);
  await expect(page.getByTestId('freeze-status')).toHaveAttribute('data-status', 'ended');
  await expect(page.getByTestId('freeze-restored')).toContainText(`${KS}: automation restored`);
  await page.screenshot({ path: 'test-results/freeze-ended.png', fullPage: true });

  // the branch holds 12 in the dev overlay
  expect(readRepoFile(OVERLAY, branch, own().state)).toMatch(/- name: render-worker\n\s+count: 12/);

  // the prior automation is restored, and Git wins until the branch is merged
  expect((kustomization().spec as Record<string, unknown>).suspend).not.toBe(true);
  requestReconcile(CLUSTER, 'kustomization', KS);
  await waitFor('Flux reverts the replicas', async () => replicas() === gitReplicas, { timeoutMs: 120_000 });

  // the write-back's pull request (opened by the console's bot user): a reviewer approves, a developer merges;
  // Flux applies the merge commit: 12, owned by the controller again
  const pr = await openPullRequestFor(branch, own().forge);
  expect(pr, `an open pull request from ${branch}`).toMatchObject({ author: 'gitops-console', base: 'main' });
  await approvePullRequest(pr!.number, 'reviewer', own().forge);
  const merged = await mergePullRequest(pr!.number, 'developer', own().forge);
  if (!merged.ok) throw new Error(`merging PR ${pr!.number}: HTTP ${merged.status} ${merged.message}`);
  await own().waitApplied(merged.mergeCommit, undefined, 180_000);
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
