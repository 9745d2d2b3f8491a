// Issue 40 in Chromium against the real sandbox: environment boundaries on an app's page (items 8 and 12) and Argo
// CD hooks (item 13), as a person sees them.
//
// 1. Environment visibility, on the spec's own estate (test/support/own-estate.ts): a dev app (its Kustomization in
//    t-dev-…, no targetNamespace: each object names its namespace) and a namespace of the spec's own, t-staging-…,
//    which the e2e console maps to staging. Its history: commit A renders a ConfigMap into the staging namespace
//    (applied and recorded as a release, the app's environment unknown meanwhile), B takes it out again (applied:
//    the app is dev again), then, the Kustomization suspended, C renders it once more (Git only: the diff shows it).
//    A live ConfigMap in the staging namespace carries the dev app's tracking labels (the tree and the diff list it
//    as extraneous). `dev-reviewer` (reviewer@nonprod/dev) sees none of these objects and a line saying how many
//    are hidden — in the tree, the diff and "what ran" at A's time; `reviewer` (every environment) sees them all
//    and no such line.
// 2. Argo CD hooks, read-only on the seed's ledger-staging: its PreSync and PostSync Jobs in the tree and the diff
//    with the hook tag and the phase Argo CD recorded (read here with kubectl), never a sync verdict.
// 3. Across environments, read-only on the seed's digital-human-dev: the "Across environments" panel shows the
//    render worker's replicas as a changed field between dev and staging; a reader of dev alone is told that two
//    environments are hidden.
//    The release comparison across environments (`releases/compare?toApp=`) has no view in the SPA: it is asked
//    through the browser's own session.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { parse } from 'yaml';
import type { CompareResponse } from '../src/api/schemas.ts';
import type { EvidenceEvent } from '../src/domain/evidence.ts';
import { waitFor } from '../sandbox/procs.ts';
import { getJson, readRepoFile, requestReconcile, suspendSettled, writeRepoFile } from '../sandbox/scenario.ts';
import { kubectl } from '../sandbox/state.ts';
import { as, signIn } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';
import { migrateTask } from '../test/support/argo-hooks.ts';
import { ownEstate, type Estate } from '../test/support/own-estate.ts';
import { consoleShows, E2E_BASE, e2eAdmin } from './support/estate.ts';

test.use({ baseURL: process.env.E2E_BASE_URL, storageState: process.env.E2E_STORAGE });

/** reviewer@nonprod/dev, and reviewer on every environment (test/support/auth.ts) */
const DEV_ONLY = 'dev-reviewer';
const EVERY_ENV = 'reviewer';
type Reader = typeof DEV_ONLY | typeof EVERY_ENV;

const storage: Partial<Record<Reader, string>> = {};
/** A page signed in as `who` (its own browser context, closed with the test). */
async function pageAs(browser: Browser, who: Reader): Promise<Page> {
  let file = storage[who];
  if (!file) {
    file = join(process.env.E2E_DATA_DIR ?? '/tmp', `storage-env-boundaries-${who}.json`);
    writeFileSync(file, JSON.stringify(storageStateFor(await signIn(E2E_BASE(), who))));
    storage[who] = file;
  }
  const ctx = await browser.newContext({ baseURL: E2E_BASE(), storageState: file });
  return ctx.newPage();
}

const yamlOf = (o: unknown) => JSON.stringify(o, null, 2);

test.describe('environment visibility: a dev app with objects in a staging namespace', () => {
  let dev: Estate | undefined;
  const own = () => dev as Estate;
  /** the spec's own namespace the console maps to staging */
  let stagingNs = '';
  /** the ConfigMap commits A and C render into the staging namespace, and the live one labelled as the dev app's */
  const RENDERED = 'rendered-into-staging';
  const LABELLED = 'labelled-as-dev';
  /** commit A (its release rendered the ConfigMap into staging) and when the console recorded it applied */
  let releaseA = '';
  let whatRanAt = new Date(0);
  let releaseB = '';

  const crossFile = () =>
    yamlOf({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: RENDERED, namespace: stagingNs },
      data: { from: 'dev-git' },
    });
  const withCross = (w: string, on: boolean) => {
    writeRepoFile(
      w,
      'app/kustomization.yaml',
      `resources:\n  - settings.yaml\n  - worker.yaml\n${on ? '  - cross.yaml\n' : ''}`,
    );
    if (on) writeRepoFile(w, 'app/cross.yaml', crossFile());
  };

  /** the release the console's recorder says was live in the estate's app at `time` */
  const releaseAt = async (time: Date) => {
    const r = await as(
      await e2eAdmin(),
      E2E_BASE(),
      `/api/apps/${own().appId()}/releases/at?time=${encodeURIComponent(time.toISOString())}`,
    );
    return (r.body as { release?: { sha: string; appliedAt: string } | null }).release ?? undefined;
  };
  const recorded = async (sha: string) => {
    let at = '';
    await waitFor(
      `the console's record of ${sha.slice(0, 8)} applied`,
      async () => {
        const rel = await releaseAt(new Date(Date.now() + 1000));
        at = rel?.sha === sha ? rel.appliedAt : '';
        return !!at;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    return new Date(at);
  };

  test.beforeAll(async () => {
    test.setTimeout(300_000);
    const t0 = Date.now();
    const laps: string[] = [];
    const lap = (what: string) => laps.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    dev = await ownEstate({
      name: 'e2e-env-boundaries',
      env: 'dev',
      // each object names its namespace: the render decides where it goes (Flux's targetNamespace would move it)
      apps: [{ name: 'app', path: 'app', spec: { targetNamespace: undefined } }],
      files: {},
      namedFiles: ({ id, namespace }) => {
        stagingNs = `t-staging-${id}`;
        return {
          'app/kustomization.yaml': 'resources:\n  - settings.yaml\n  - worker.yaml\n',
          'app/settings.yaml': yamlOf({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'settings', namespace },
            data: { note: 'dev' },
          }),
          'app/worker.yaml': yamlOf({
            apiVersion: 'v1',
            kind: 'ServiceAccount',
            metadata: { name: 'worker', namespace },
          }),
        };
      },
    });
    kubectl(
      'nonprod',
      ['apply', '-f', '-'],
      yamlOf({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: stagingNs, labels: { 'gitops-console.dev/test-estate': own().id } },
      }),
    );
    await consoleShows(own().appId(), { env: 'dev', sha: own().seedCommit });
    lap('estate');
    await recorded(own().seedCommit);
    lap('seed recorded');
    // A: the dev app's Git renders a ConfigMap into the staging namespace; Flux applies it (the app deploys to two
    // environments meanwhile: environment unknown) and the console records the release with its manifests
    releaseA = own().push('Render a ConfigMap into the staging namespace (env-boundaries e2e)', (w) =>
      withCross(w, true),
    );
    await own().waitApplied(releaseA, undefined, 120_000);
    lap('A applied');
    const appliedA = await recorded(releaseA);
    lap('A recorded');
    // B: taken out again (Flux prunes it): the app is dev again
    releaseB = own().push('Take the staging ConfigMap out again', (w) => withCross(w, false));
    await own().waitApplied(releaseB, undefined, 120_000);
    lap('B applied');
    const appliedB = await recorded(releaseB);
    // the console has the app in dev again (its inventory back in its own namespace)
    await consoleShows(own().appId(), { env: 'dev', sha: releaseB });
    lap('B recorded');
    // "what ran at" is typed to the second: the first whole second after A's apply, before B's
    whatRanAt = new Date(Math.ceil((appliedA.getTime() + 1) / 1000) * 1000);
    expect(whatRanAt.getTime(), `A applied ${appliedA.toISOString()}, B ${appliedB.toISOString()}`).toBeLessThan(
      appliedB.getTime(),
    );
    expect((await releaseAt(whatRanAt))?.sha).toBe(releaseA);
    // C: held (suspended), Git renders it into staging once more: only the diff shows it
    await suspendSettled('nonprod', own().kustomization());
    lap('suspended');
    const c = own().push('Render it into the staging namespace again (not applied)', (w) => withCross(w, true));
    // a live object in the staging namespace labelled as the dev app's (anyone who may label there could)
    kubectl(
      'nonprod',
      ['apply', '-f', '-'],
      yamlOf({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: LABELLED,
          namespace: stagingNs,
          labels: {
            'kustomize.toolkit.fluxcd.io/name': own().kustomization(),
            'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
          },
        },
        data: { note: 'staging' },
      }),
    );
    let nudged = 0;
    await waitFor(
      `the dev app's source at ${c.slice(0, 8)} and its diff rendering it`,
      async () => {
        if (Date.now() - nudged > 5000) {
          nudged = Date.now();
          requestReconcile('nonprod', 'gitrepository', own().source);
        }
        const st = getJson('nonprod', ['-n', 'flux-system', 'get', 'gitrepository', own().source]).status as
          { artifact?: { revision?: string } } | undefined;
        if (!st?.artifact?.revision?.includes(c)) return false;
        const d = await as(await e2eAdmin(), E2E_BASE(), `/api/apps/${own().appId()}/diff`);
        return ((d.body.render as { revision?: string } | undefined)?.revision ?? '').includes(c);
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    lap('C in the diff');
    console.log(`env-boundaries estate: ${laps.join(', ')}`);
  });

  test.afterAll(async () => {
    test.setTimeout(180_000);
    if (stagingNs) kubectl('nonprod', ['delete', 'namespace', stagingNs, '--ignore-not-found', '--wait=false']);
    await dev?.teardown();
  });

  test('the tree: the labelled staging object hidden and counted for dev alone, shown to every environment', async ({
    browser,
  }) => {
    const line = '1 object in an environment you may not read is hidden';
    const mine = await pageAs(browser, DEV_ONLY);
    await mine.goto(`/apps/${own().appId()}`);
    await expect(mine.getByTestId('current-roles')).toHaveText('reviewer@nonprod/dev');
    const rows = mine.getByTestId('tree-row');
    await expect(mine.locator('[data-testid="tree-row"][data-kind="ConfigMap"][data-name="settings"]')).toBeVisible();
    await expect(mine.getByTestId('tree-hidden-envs')).toHaveText(line);
    await expect(rows.filter({ hasText: LABELLED })).toHaveCount(0);
    await mine.context().close();

    const all = await pageAs(browser, EVERY_ENV);
    await all.goto(`/apps/${own().appId()}`);
    const labelled = all.locator(`[data-testid="tree-row"][data-kind="ConfigMap"][data-name="${LABELLED}"]`);
    await expect(labelled).toBeVisible();
    await expect(labelled).toHaveAttribute('data-sync', 'Extraneous');
    await expect(all.getByTestId('tree-hidden-envs')).toHaveCount(0);
    await all.context().close();
  });

  test('the diff: the rendered and the labelled staging objects hidden and counted for dev alone', async ({
    browser,
  }) => {
    const mine = await pageAs(browser, DEV_ONLY);
    await mine.goto(`/apps/${own().appId()}`);
    const diff = mine.getByTestId('app-diff');
    await expect(diff.getByTestId('render-info')).toBeVisible();
    await expect(diff.getByTestId('diff-hidden-envs')).toHaveText(
      '2 objects in environments you may not read are hidden',
    );
    await expect(diff.getByTestId('object-diff')).toHaveCount(0);
    await expect(diff).not.toContainText(stagingNs);
    await mine.context().close();

    const all = await pageAs(browser, EVERY_ENV);
    await all.goto(`/apps/${own().appId()}`);
    const d = all.getByTestId('app-diff');
    const rendered = d.locator(`[data-testid="object-diff"][data-name="${RENDERED}"]`);
    await expect(rendered).toContainText(`${stagingNs}/${RENDERED}`);
    // in Git (C), never applied: missing live
    await expect(rendered).toHaveAttribute('data-status', 'missing');
    await expect(d.locator(`[data-testid="object-diff"][data-name="${LABELLED}"]`)).toHaveAttribute(
      'data-status',
      'extraneous',
    );
    await expect(d.getByTestId('diff-hidden-envs')).toHaveCount(0);
    await all.context().close();
  });

  test('what ran at A’s time: the object A rendered into staging hidden and counted for dev alone', async ({
    browser,
  }) => {
    const p = (n: number) => String(n).padStart(2, '0');
    const d = whatRanAt;
    const local = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    const open = async (who: Reader) => {
      const page = await pageAs(browser, who);
      await page.goto(`/apps/${own().appId()}`);
      const box = page.getByTestId('what-ran');
      await box.getByLabel('What ran in dev at').fill(local);
      await box.getByRole('button', { name: 'Show' }).click();
      await expect(box.getByTestId('what-ran-release')).toHaveAttribute('data-sha', releaseA);
      const objects = box.getByTestId('what-ran-objects');
      await expect(objects).toBeVisible();
      await objects.locator('summary').first().click();
      return { page, box, objects };
    };
    const mine = await open(DEV_ONLY);
    await expect(mine.box.getByTestId('what-ran-hidden')).toHaveText(
      '1 object in an environment you may not read is hidden',
    );
    await expect(mine.objects.locator('summary').first()).toContainText(/^2 objects as rendered/);
    await expect(mine.objects.locator('li summary')).toHaveText([
      `ConfigMap ${own().namespace}/settings`,
      `ServiceAccount ${own().namespace}/worker`,
    ]);
    await expect(mine.box).not.toContainText(stagingNs);
    await mine.page.context().close();

    const all = await open(EVERY_ENV);
    await expect(all.objects.locator('summary').first()).toContainText(/^3 objects as rendered/);
    await expect(all.objects.locator('li summary', { hasText: `ConfigMap ${stagingNs}/${RENDERED}` })).toHaveCount(1);
    await expect(all.box.getByTestId('what-ran-hidden')).toHaveCount(0);
    await all.page.context().close();
  });
});

test('Argo CD hooks: the seed ledger’s hook Jobs carry the hook tag in the tree and the diff, no sync verdict', async ({
  page,
}) => {
  // what Argo CD recorded of the hooks of its last sync (the seed's premise, read rather than assumed)
  const app = getJson('nonprod', ['-n', 'argocd', 'get', 'application', 'ledger-staging']);
  const tasks = ((
    ((app.status as Record<string, unknown>).operationState as Record<string, unknown>)?.syncResult as Record<
      string,
      unknown
    >
  )?.resources ?? []) as Array<Record<string, string>>;
  const hooks = tasks.filter((t) => t.hookType);
  const migrate = migrateTask('');
  expect(hooks.map((h) => `${h.kind}/${h.name} ${h.hookType}`).sort()).toEqual([
    `${migrate.kind}/${migrate.name} ${migrate.hookType}`,
    'Job/ledger-smoke-test PostSync',
  ]);
  await page.goto('/apps/nonprod/argocd/application/ledger-staging');
  for (const h of hooks) {
    const tag = new RegExp(`^hook · ${h.hookType} · ${h.hookPhase}( .+ ago)?$`);
    const row = page.locator(`[data-testid="tree-row"][data-kind="Job"][data-name="${h.name}"]`);
    await expect(row.getByTestId('node-hook')).toHaveText(tag);
    await expect(row).toHaveAttribute('data-sync', '');
    await expect(row.getByTestId('node-sync')).toHaveCount(0);
    const obj = page.locator(`[data-testid="object-diff"][data-kind="Job"][data-name="${h.name}"]`);
    await expect(obj).toHaveAttribute('data-status', 'hook');
    await expect(obj.getByTestId('node-hook')).toHaveText(tag);
    await expect(obj).not.toContainText('unchanged');
  }
  // the app's own objects keep their verdict
  await expect(
    page.locator('[data-testid="tree-row"][data-kind="Deployment"][data-name="ledger"]').getByTestId('node-sync'),
  ).toHaveText('Synced');
});

test('across environments: dev and staging of the seed app differ in changed fields; a reader of dev alone compares none', async ({
  browser,
}) => {
  const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
  const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
  const replicas = (env: string) =>
    (
      parse(readRepoFile(`overlays/${env}/kustomization.yaml`)) as { replicas?: Array<{ name: string; count: number }> }
    ).replicas?.find((r) => r.name === 'render-worker')?.count;
  const [devN, stagingN] = [replicas('dev'), replicas('staging')];
  expect(devN, 'the seed overlays give the render worker different replicas').not.toBe(stagingN);

  const all = await pageAs(browser, EVERY_ENV);
  await all.goto(`/apps/${DEV}`);
  const panel = all.getByTestId('env-compare');
  await expect(panel.locator('thead th')).toHaveText([/^Image/, /^dev /, /^staging /, /^prod /]);
  await expect(panel.getByTestId('env-compare-hidden')).toHaveCount(0);
  await panel.locator('summary', { hasText: /fields differ between environments/ }).click();
  const row = panel
    .getByTestId('env-fields')
    .locator('tr')
    .filter({ hasText: 'Deployment render-worker' })
    .filter({ hasText: /^.*spec\.replicas/ });
  await expect(row.locator('td').nth(1)).toHaveText('spec.replicas');
  await expect(row.locator('td').nth(2)).toHaveText(String(devN));
  await expect(row.locator('td').nth(3)).toHaveText(String(stagingN));

  // the release comparison across environments: no view asks it, so the browser's session does (as a view would)
  const admin = await e2eAdmin();
  const rendered: Record<string, string> = {};
  await waitFor(
    "the digital-human apps' renders recorded with their manifests",
    async () => {
      for (const app of [DEV, STAGING]) {
        if (rendered[app]) continue;
        const ev = await as(admin, E2E_BASE(), `/api/evidence?type=release.render&app=${encodeURIComponent(app)}`);
        const sha = (ev.body as { events?: EvidenceEvent[] }).events?.find(
          (e) => typeof e.data.renderHash === 'string' && typeof e.data.sha === 'string',
        )?.data.sha as string | undefined;
        if (sha && (await as(admin, E2E_BASE(), `/api/apps/${app}/releases/${sha}/manifests`)).status === 200)
          rendered[app] = sha;
      }
      return Object.keys(rendered).length === 2;
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  const r = await all.request.get(
    `/api/apps/${DEV}/releases/compare?from=${rendered[DEV]}&to=${rendered[STAGING]}&toApp=${STAGING}`,
  );
  expect(r.status()).toBe(200);
  const c = (await r.json()) as CompareResponse;
  // every object of one side is an object of the other (the seed's dev and staging overlays add none): none reads as
  // removed on one side and added on the other, as it would if the two namespaces were compared as they are
  expect(
    c.added.length + c.removed.length,
    `${c.changed.length} changed, ${c.added.length} added, ${c.removed.length} removed`,
  ).toBe(0);
  expect(c).toMatchObject({ from: { targetNamespace: 'dev' }, to: { targetNamespace: 'staging' } });
  expect(c.changed.find((o) => o.kind === 'Deployment' && o.name === 'render-worker')?.fields).toContainEqual({
    path: 'spec.replicas',
    from: devN,
    to: stagingN,
  });
  await all.context().close();

  const mine = await pageAs(browser, DEV_ONLY);
  await mine.goto(`/apps/${DEV}`);
  await expect(mine.getByTestId('app-diff').getByTestId('render-info')).toBeVisible();
  await expect(mine.getByText('Rendering every environment…')).toHaveCount(0);
  // the panel says the other environments are left out (counted, never named) instead of vanishing
  await expect(mine.getByTestId('env-compare-hidden')).toHaveText(
    '2 more environments of this app are hidden: you may not read them.',
  );
  await expect(mine.getByTestId('env-image')).toHaveCount(0);
  await expect(mine.getByTestId('env-compare')).not.toContainText('staging');
  const refused = await mine.request.get(
    `/api/apps/${DEV}/releases/compare?from=${rendered[DEV]}&to=${rendered[STAGING]}&toApp=${STAGING}`,
  );
  expect(refused.status()).toBe(403);
  expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
    new RegExp(`^Cannot compare with ${STAGING}: You need the .* role`),
  );
  await mine.context().close();
});
