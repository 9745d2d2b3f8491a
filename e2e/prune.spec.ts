// Issue #9's acceptance in Chromium against the real sandbox. First: a ConfigMap removed from Git (prod: Flux
// `prune: false`, so the console deletes) → the preview lists it → the requester cannot approve (button
// disabled with the reason) → a reviewer approves → it is deleted → the evidence shows the chain. Second: an
// empty render in staging (Flux `prune: true`) → kustomize-controller's prune is denied by the console's
// admission policy → the preview says `needs-override` with the reason → nothing is deleted.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';
import {
  commitAndPush,
  getJson,
  makeRenderEmpty,
  readRepoFile,
  requestReconcile,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../sandbox/scenario.ts';
import { waitFor } from '../sandbox/procs.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: { cookies: [], origins: [] } });

const APP = '/apps/prod/flux-system/kustomization/digital-human-prod';
const OVERLAY = 'overlays/prod/kustomization.yaml';
const NAME = `e2e-prune-probe-${Date.now().toString(36)}`;
// the prod overlay as it was (the remove commit writes it back)
let original = '';

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test.beforeAll(async () => {
  test.setTimeout(600_000);
  const added = commitAndPush('e2e prune probe: add', (w) => {
    original = readFileSync(join(w, OVERLAY), 'utf8');
    writeRepoFile(
      w,
      'overlays/prod/e2e-prune-probe.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${NAME}\ndata:\n  a: "1"\n`,
    );
    writeRepoFile(w, OVERLAY, original.replace('  - ../../base\n', '  - ../../base\n  - e2e-prune-probe.yaml\n'));
  });
  await waitForKustomizationRevision('prod', 'digital-human-prod', added, 180_000);
  const removed = commitAndPush('e2e prune probe: remove from Git', (w) => {
    rmSync(join(w, 'overlays/prod/e2e-prune-probe.yaml'));
    writeRepoFile(w, OVERLAY, original);
  });
  await waitForKustomizationRevision('prod', 'digital-human-prod', removed, 180_000);
  requestReconcile('prod', 'gitrepository', 'digital-human');
});

test.afterAll(() => {
  kubectl('prod', ['-n', 'prod', 'delete', 'configmap', NAME, '--ignore-not-found', '--wait=false']);
});

test('remove a ConfigMap from Git → preview → the requester cannot approve → a reviewer approves → deleted', async ({
  page,
  browser,
}) => {
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
  expect(kubectl('prod', ['-n', 'prod', 'get', 'configmap', NAME, '--ignore-not-found', '-o', 'name']).trim()).toBe('');
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
  const STAGING = '/apps/nonprod/flux-system/kustomization/digital-human-staging';
  const KS = 'digital-human-staging';
  const overlay = readRepoFile('overlays/staging/kustomization.yaml');
  const liveIn = (kind: string, name: string) =>
    kubectl('nonprod', ['-n', 'staging', 'get', kind, name, '--ignore-not-found', '-o', 'name']).trim() !== '';
  const empty = makeRenderEmpty('staging');
  try {
    // kustomize-controller applies the empty render and tries to prune: the policy says no
    let nudged = 0;
    await waitFor(
      'Flux prune denied by the admission policy',
      async () => {
        if (Date.now() - nudged > 5000) {
          nudged = Date.now();
          requestReconcile('nonprod', 'gitrepository', 'digital-human');
          requestReconcile('nonprod', 'kustomization', KS);
        }
        const st = (
          getJson('nonprod', ['-n', 'flux-system', 'get', 'kustomization', KS]) as {
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
  } finally {
    const restore = commitAndPush('e2e: restore the staging overlay', (w) =>
      writeRepoFile(w, 'overlays/staging/kustomization.yaml', overlay),
    );
    await waitForKustomizationRevision('nonprod', KS, restore, 240_000);
  }
});
