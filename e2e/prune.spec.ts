// Issue #9's acceptance in Chromium against the real sandbox. First: a ConfigMap removed from Git (prod: Flux
// `prune: false`, so the console deletes) → the preview lists it → the requester cannot approve (button
// disabled with the reason) → a reviewer approves → it is deleted → the evidence shows the chain. Second: an
// empty render in staging (Flux `prune: true`) → kustomize-controller's prune is denied by the console's
// admission policy → the preview says `needs-override` with the reason → nothing is deleted.
// Each on the spec's own estate (test/support/prod-probe-estate.ts: the seed's prod service, Flux `prune: false`,
// the probe in its first commit and out of Git in the second; own-estate.ts: the seed's staging service in a
// governed namespace, Flux `prune: true`); both are deleted at the end.
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';
import { getJson, requestReconcile, writeRepoFile } from '../sandbox/scenario.ts';
import { waitFor } from '../sandbox/procs.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../test/support/own-estate.ts';
import { prodProbeEstate, type ProdProbeEstate } from '../test/support/prod-probe-estate.ts';
import { consoleShows, E2E_BASE, e2eAdmin } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: { cookies: [], origins: [] } });

const NAME = `e2e-prune-probe-${Date.now().toString(36)}`;
let prod: ProdProbeEstate | undefined;
let staging: Estate | undefined;
const prodEstate = () => prod as ProdProbeEstate;
const stagingEstate = () => staging as Estate;

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test.beforeAll(async () => {
  test.setTimeout(600_000);
  // both at once: each waits on its own controllers
  const [p, s] = await Promise.allSettled([
    // the seed's prod service with the probe in the first commit; the second takes it out of Git (it stays live)
    prodProbeEstate({ name: 'e2e-prune', probes: [NAME], template: 'digital-human' }),
    ownEstate({ name: 'e2e-prune', env: 'staging', files: digitalHumanTemplate('staging'), governed: true }),
  ]);
  if (p.status === 'fulfilled') prod = p.value;
  if (s.status === 'fulfilled') staging = s.value;
  if (p.status === 'rejected') throw p.reason;
  if (s.status === 'rejected') throw s.reason;
  await prodEstate().consoleAt(E2E_BASE(), await e2eAdmin());
  await consoleShows(prodEstate().app, { env: 'prod', sha: prodEstate().removed });
  await consoleShows(stagingEstate().appId(), { env: 'staging', sha: stagingEstate().seedCommit });
});

test.afterAll(async () => {
  test.setTimeout(240_000);
  await Promise.all([prod?.teardown(), staging?.teardown()]);
});

test('remove a ConfigMap from Git → preview → the requester cannot approve → a reviewer approves → deleted', async ({
  page,
  browser,
}) => {
  const APP = `/apps/${prodEstate().app}`;
  await page.goto(APP);
  await signInAs(page, 'developer');
  await expect(page).toHaveURL(new RegExp(`${APP}$`));
  await page.getByTestId('preview-prune').click();
  await expect(page).toHaveURL(/\/prune-previews\/[0-9a-f-]{36}$/);
  const previewUrl = page.url();
  await expect(page.locator(`[data-testid="prune-candidate"][data-name="${NAME}"]`)).toBeVisible();
  await expect(page.getByTestId('prune-approve')).toBeDisabled();
  await expect(page.getByTestId('prune-approve-reason')).toContainText('approve this prune');

  const reviewer = await browser.newPage();
  await reviewer.goto(previewUrl);
  await signInAs(reviewer, 'admin');
  await reviewer.getByTestId('prune-comment').fill('removed from Git in the last release');
  await reviewer.getByTestId('prune-approve').click();
  await expect(reviewer.getByTestId('prune-status')).toHaveText('done', { timeout: 60_000 });
  expect(prodEstate().isLive(NAME)).toBe(false);
  await expect(reviewer.getByTestId('prune-decisions')).toContainText('Approved by admin');
  // the evidence shows the chain: requested, approved, the delete (intent and outcome), executed
  const previewId = /\/prune-previews\/([0-9a-f-]{36})$/.exec(previewUrl)?.[1] ?? '';
  await reviewer.goto(`/evidence?q=${previewId}`);
  const rows = reviewer.getByTestId('evidence-row');
  for (const type of ['prune.requested', 'prune.approved', 'prune.executed'])
    await expect(rows.filter({ has: reviewer.getByRole('cell', { name: type, exact: true }) })).toHaveCount(1);
  await expect(rows.filter({ has: reviewer.getByRole('cell', { name: 'prune.delete', exact: true }) })).not.toHaveCount(
    0,
  );
  await reviewer.close();
});

test("an empty render: Flux's prune is denied by the admission policy, the preview needs an override, nothing is deleted", async ({
  page,
}) => {
  test.setTimeout(600_000);
  const estate = stagingEstate();
  const { cluster, namespace } = estate;
  const STAGING = `/apps/${estate.appId()}`;
  const KS = estate.kustomization();
  const liveIn = (kind: string, name: string) =>
    kubectl(cluster, ['-n', namespace, 'get', kind, name, '--ignore-not-found', '-o', 'name']).trim() !== '';
  // the estate's staging overlay renders to zero objects (the dangerous-prune scenario)
  const empty = estate.push('e2e: empty the staging render', (w) =>
    writeRepoFile(
      w,
      'overlays/staging/kustomization.yaml',
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n',
    ),
  );
  // kustomize-controller applies the empty render and tries to prune: the policy says no
  let nudged = 0;
  await waitFor(
    'Flux prune denied by the admission policy',
    async () => {
      if (Date.now() - nudged > 5000) {
        nudged = Date.now();
        requestReconcile(cluster, 'gitrepository', estate.source);
        requestReconcile(cluster, 'kustomization', KS);
      }
      const st = (
        getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', KS]) as {
          status?: {
            lastAttemptedRevision?: string;
            conditions?: Array<{ type: string; status: string; message?: string }>;
          };
        }
      ).status;
      const ready = st?.conditions?.find((c) => c.type === 'Ready');
      return (
        String(st?.lastAttemptedRevision ?? '').endsWith(empty) &&
        ready?.status === 'False' &&
        /needs an approved prune preview in the GitOps console/.test(ready.message ?? '')
      );
    },
    { timeoutMs: 240_000, intervalMs: 1000 },
  );
  expect(liveIn('deployment', 'render-worker')).toBe(true);

  await page.goto(STAGING);
  await signInAs(page, 'developer');
  await expect(page).toHaveURL(new RegExp(`${STAGING}$`));
  // the console sees the empty render (its diff and the plan agree)
  await expect
    .poll(
      async () =>
        ((await (await page.request.get(`/api${STAGING}/diff`)).json()) as { emptyRender?: boolean }).emptyRender,
      { timeout: 120_000, intervals: [1000] },
    )
    .toBe(true);
  await page.reload();
  await page.getByTestId('preview-prune').click();
  await expect(page).toHaveURL(/\/prune-previews\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId('prune-reasons')).toContainText('the render is empty');
  await expect(page.getByTestId('prune-status')).toHaveText('pending');
  await expect(page.getByTestId('prune-approve')).toBeDisabled();
  // nothing was deleted, by Flux or by anyone
  for (const [kind, name] of [
    ['deployment', 'render-worker'],
    ['deployment', 'tts-gateway'],
    ['service', 'tts-gateway'],
    ['configmap', 'render-worker-config'],
  ] as const)
    expect(liveIn(kind, name), `${kind}/${name}`).toBe(true);
  // nothing to restore: the estate (its repository, Kustomization and namespace) is deleted in afterAll
});
