// Issue 40, items 8 and 9, against the real sandbox: what a reader may not read stays out of every list and
// answer, and a single item of it is a 403 recorded as access.denied that says nothing of the item.
//
// The console runs in impersonation mode (CONSOLE_CLUSTER_ACCESS=impersonate) as its own least-privilege identity,
// so both rules are checked: the console grant's environment, and the reader's Kubernetes RBAC on the app objects.
//   - af-dev (reviewer@nonprod/dev) and af-both (reviewer@nonprod/dev,staging) may read everything in Kubernetes:
//     only their grants differ;
//   - af-kube (reviewer@nonprod, every environment) may read nothing in Kubernetes but the dev estate's namespace:
//     no app object at all (Kustomizations in flux-system, Applications and ApplicationSets in argocd);
//   - af-kcm (reviewer@nonprod/dev) may read the app objects and everything in the dev estate's namespace but
//     ConfigMaps.
// Two estates of this file (test/support/own-estate.ts): `dev`, in t-dev-… (mapped to dev), whose Kustomization
// names each object's namespace itself (no targetNamespace), and `stg`, in t-staging-… (mapped to staging). Item 8:
// a live object in stg's namespace carrying the dev app's tracking labels, and a commit of the dev app's Git that
// renders an object into stg's namespace (the dev Kustomization suspended first, so that Flux never applies it and
// the dev app stays dev; reverted and resumed after). The seed is only read (its ApplicationSets `web`, dev and
// staging, and `tenants`, staging).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse, TreeResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, requestReconcile, writeRepoFile } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { canI, READ, READ_ALL, rbacRun, user } from '../support/impersonation.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const rbac = rbacRun('access-filter');
const run = rbac.run.slice(-6);
const U = {
  admin: `af-admin-${run}`,
  dev: `af-dev-${run}`,
  both: `af-both-${run}`,
  kube: `af-kube-${run}`,
  kcm: `af-kcm-${run}`,
};
/** what the staging estate's ConfigMap holds: no answer to a reader without staging may carry it */
const STAGING_VALUE = `staging-only-${run}`;
const LEAK = `af-leak-${run}`;

let con: Awaited<ReturnType<typeof startTestConsole>>;
let dev: Estate;
let stg: Estate;
const s = {} as Record<keyof typeof U, Signed>;

const get = (who: Signed, path: string) => as(who, con.url, path);
async function denials(actor: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=access.denied&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events.filter((e) => e.actor === actor);
}
/** whether the dev estate's source has fetched `sha` (asking it to fetch now) */
function sourceAt(sha: string): boolean {
  requestReconcile('nonprod', 'gitrepository', dev.source);
  const st = getJson('nonprod', ['-n', 'flux-system', 'get', 'gitrepository', dev.source]).status as {
    artifact?: { revision?: string };
  };
  return (st.artifact?.revision ?? '').includes(sha);
}
const objectQuery = (ns: string, name: string) => `?group=&version=v1&kind=ConfigMap&namespace=${ns}&name=${name}`;

beforeAll(async () => {
  [stg, dev] = await Promise.all([
    ownEstate({
      name: 'access-filter-stg',
      env: 'staging',
      // two apps: a denial is one record a minute per person and app, whichever route asked (guard.ts), so the
      // prune previews are checked on one and the freezes on the other
      apps: [
        { name: 'app', path: 'app' },
        { name: 'other', path: 'other' },
      ],
      files: {
        'other/kustomization.yaml': 'resources:\n  - note.yaml\n',
        'other/note.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other-note\ndata:\n  note: other\n',
        'app/kustomization.yaml': 'resources:\n  - settings.yaml\n  - worker.yaml\n',
        'app/settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  note: ${STAGING_VALUE}\n`,
        'app/worker.yaml': 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: worker\n',
      },
    }),
    ownEstate({
      name: 'access-filter-dev',
      env: 'dev',
      // each object names its namespace: the render decides where it goes (Flux's targetNamespace would move it)
      apps: [{ name: 'app', path: 'app', spec: { targetNamespace: undefined } }],
      files: {},
      namedFiles: ({ namespace }) => ({
        'app/kustomization.yaml': 'resources:\n  - settings.yaml\n  - worker.yaml\n',
        'app/settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${namespace}\ndata:\n  note: dev\n`,
        'app/worker.yaml': `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: worker\n  namespace: ${namespace}\n`,
      }),
    }),
  ]);
  // Kubernetes RBAC of this run's users (impersonation mode: what they may get decides too)
  const all = rbac.role('nonprod', 'console-test-read', READ_ALL);
  rbac.bind('nonprod', 'console-test-af-read', all, [user(U.dev), user(U.both)]);
  const admin = rbac.role('nonprod', 'console-test-af-admin', [
    ...READ_ALL,
    { apiGroups: ['kustomize.toolkit.fluxcd.io'], resources: ['kustomizations'], verbs: ['patch', 'update'] },
  ]);
  rbac.bind('nonprod', 'console-test-af-admin', admin, [user(U.admin)]);
  const devNs = rbac.role('nonprod', 'console-test-read', READ_ALL, dev.namespace);
  rbac.bind('nonprod', 'console-test-af-kube', devNs, [user(U.kube)], dev.namespace);
  const apps = rbac.role('nonprod', 'console-test-read', READ_ALL, 'flux-system');
  rbac.bind('nonprod', 'console-test-af-kcm-apps', apps, [user(U.kcm)], 'flux-system');
  const noConfigMaps = rbac.role(
    'nonprod',
    'console-test-no-configmaps',
    [
      { apiGroups: ['apps'], resources: ['*'], verbs: READ },
      { apiGroups: [''], resources: ['serviceaccounts', 'services', 'pods', 'events'], verbs: READ },
    ],
    dev.namespace,
  );
  rbac.bind('nonprod', 'console-test-af-kcm', noConfigMaps, [user(U.kcm)], dev.namespace);
  await waitFor(
    'RBAC in effect',
    async () =>
      canI(U.both, 'get', '', 'configmaps', stg.namespace) &&
      canI(U.admin, 'patch', 'kustomize.toolkit.fluxcd.io', 'kustomizations', 'flux-system') &&
      canI(U.kube, 'get', '', 'configmaps', dev.namespace) &&
      canI(U.kcm, 'get', '', 'serviceaccounts', dev.namespace) &&
      !canI(U.kcm, 'get', '', 'configmaps', dev.namespace),
    { timeoutMs: 20_000 },
  );
  // the release recorder keeps each release's manifests (the manifests route reads them); nonprod only
  con = await startTestConsole(
    { ...RECORDER_ON, CONSOLE_CLUSTER_ACCESS: 'impersonate', CONSOLE_CONTEXTS: 'nonprod' },
    {
      accounts: {
        users: {
          [U.admin]: ['admin'],
          [U.dev]: ['reviewer@nonprod/dev'],
          [U.both]: ['reviewer@nonprod/dev,staging'],
          [U.kube]: ['reviewer@nonprod'],
          [U.kcm]: ['reviewer@nonprod/dev'],
        },
      },
    },
  );
  for (const k of Object.keys(U) as Array<keyof typeof U>) s[k] = await signIn(con.url, U[k]);
  await waitFor(
    'the console has both estates, each in its environment',
    async () => {
      const a = await get(s.both, `/api/apps/${dev.appId()}`);
      const b = await get(s.both, `/api/apps/${stg.appId()}`);
      return (
        (a.body.app as { env?: string } | undefined)?.env === 'dev' &&
        (b.body.app as { env?: string } | undefined)?.env === 'staging'
      );
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
}, 400_000);

afterAll(async () => {
  await con?.close();
  rbac.cleanup();
  await Promise.all([dev?.teardown(), stg?.teardown()]);
}, 180_000);

describe('item 8: objects in another environment’s namespace, in the dev app’s tree, diff and object routes', () => {
  type Tree = TreeResponse & { hiddenByEnvironment?: number };
  type Diff = DiffResponse & { hiddenByEnvironment?: number };

  it('a live staging object carrying the dev app’s label: hidden and counted for dev, shown to dev+staging, 403 by reference', async () => {
    // in stg's namespace, labelled as the dev Kustomization's (as anyone who may label there, or Flux, would)
    kubectl(
      'nonprod',
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: LEAK,
          namespace: stg.namespace,
          labels: {
            'kustomize.toolkit.fluxcd.io/name': dev.kustomization(),
            'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
          },
        },
        data: { note: STAGING_VALUE },
      }),
    );
    const inStaging = (t: Tree) => t.nodes.filter((n) => n.ref.namespace === stg.namespace);
    let both: Tree | undefined;
    await waitFor(
      'the labelled object in the dev app’s tree',
      async () => {
        both = (await get(s.both, `/api/apps/${dev.appId()}/tree`)).body as unknown as Tree;
        return inStaging(both).some((n) => n.ref.name === LEAK);
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    expect(inStaging(both as Tree)).toMatchObject([{ ref: { kind: 'ConfigMap', name: LEAK }, sync: 'Extraneous' }]);
    expect(both?.hiddenByEnvironment).toBeUndefined();

    const r = await get(s.dev, `/api/apps/${dev.appId()}/tree`);
    expect(r.status).toBe(200);
    const mine = r.body as unknown as Tree;
    expect(inStaging(mine)).toEqual([]);
    expect(r.text).not.toContain(stg.namespace);
    // said, never silently gone; the summary counts only what is shown
    expect(mine.hiddenByEnvironment).toBe(1);
    expect(mine.summary.total).toBe(mine.nodes.length);
    expect(mine.nodes.some((n) => n.ref.namespace === dev.namespace && n.ref.name === 'settings')).toBe(true);

    // its diff: the same row hidden for dev (with its live YAML), shown to dev+staging
    const bothDiff = (await get(s.both, `/api/apps/${dev.appId()}/diff`)).body as unknown as Diff;
    expect(bothDiff.objects.find((o) => o.ref.name === LEAK)).toMatchObject({ status: 'extraneous' });
    expect(JSON.stringify(bothDiff)).toContain(STAGING_VALUE);
    const dr = await get(s.dev, `/api/apps/${dev.appId()}/diff`);
    expect(dr.status).toBe(200);
    const devDiff = dr.body as unknown as Diff;
    expect(devDiff.objects.filter((o) => o.ref.namespace === stg.namespace)).toEqual([]);
    expect(devDiff.hiddenByEnvironment).toBe(1);
    expect(devDiff.counts.extraneous).toBe(0);
    expect(dr.text).not.toContain(STAGING_VALUE);
    expect(dr.text).not.toContain(stg.namespace);

    // by reference: the namespace's mapping decides (staging), not the dev app whose label it carries
    const o = await get(s.dev, `/api/clusters/nonprod/object${objectQuery(stg.namespace, LEAK)}`);
    expect(o.status).toBe(403);
    expect(o.text).not.toContain(STAGING_VALUE);
    expect((await get(s.dev, `/api/clusters/nonprod/events${objectQuery(stg.namespace, LEAK)}`)).status).toBe(403);
    const ok = await get(s.both, `/api/clusters/nonprod/object${objectQuery(stg.namespace, LEAK)}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain(STAGING_VALUE);
    // the dev app's own object stays readable for dev
    expect((await get(s.dev, `/api/clusters/nonprod/object${objectQuery(dev.namespace, 'settings')}`)).status).toBe(
      200,
    );
    expect(
      (await denials(U.dev)).some(
        (e) => e.env === 'staging' && e.data.route === '/api/clusters/:cluster/object' && e.data.action === 'app.read',
      ),
    ).toBe(true);
  });

  it('the dev app’s Git renders an object into staging’s namespace: its row (and staging’s live object) hidden for dev', async () => {
    // suspended first: Flux never applies the commit, so the app stays dev (applied, its inventory would make it
    // `unknown`) while its diff renders the new commit from the source
    kubectl('nonprod', [
      ...['-n', 'flux-system', 'patch', 'kustomization', dev.kustomization()],
      ...['--type=merge', '-p', JSON.stringify({ spec: { suspend: true } })],
    ]);
    // a field of staging's live object written by a manager seen nowhere else: dev's ownership table must not name it
    kubectl('nonprod', [
      ...['-n', stg.namespace, 'patch', 'configmap', 'settings', '--field-manager=staging-hand'],
      ...['--type=merge', '-p', JSON.stringify({ data: { hand: 'set-by-hand' } })],
    ]);
    try {
      const sha = dev.push('Render a ConfigMap into the staging estate’s namespace', (w) => {
        writeRepoFile(w, 'app/kustomization.yaml', 'resources:\n  - settings.yaml\n  - worker.yaml\n  - cross.yaml\n');
        writeRepoFile(
          w,
          'app/cross.yaml',
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${stg.namespace}\ndata:\n  note: from-dev-git\n`,
        );
      });
      await waitFor('the source has the commit', async () => sourceAt(sha), { timeoutMs: 60_000, intervalMs: 2000 });
      const crossRow = (d: Diff) =>
        d.objects.find((o) => o.ref.namespace === stg.namespace && o.ref.name === 'settings');
      let both: Diff | undefined;
      await waitFor(
        'the diff renders the commit',
        async () => {
          both = (await get(s.both, `/api/apps/${dev.appId()}/diff`)).body as unknown as Diff;
          return both.render?.revision.includes(sha) === true;
        },
        { timeoutMs: 60_000, intervalMs: 2000 },
      );
      // dev+staging: the row, with staging's live object beside Git's
      expect(crossRow(both as Diff)?.liveYaml).toContain(STAGING_VALUE);
      expect((await get(s.both, `/api/apps/${dev.appId()}`)).body.app).toMatchObject({ env: 'dev' });
      // dev: neither the row nor staging's live value; two rows hidden (this one and the labelled object)
      const dr = await get(s.dev, `/api/apps/${dev.appId()}/diff`);
      expect(dr.status).toBe(200);
      const devDiff = dr.body as unknown as Diff;
      expect(devDiff.render?.revision).toContain(sha);
      expect(crossRow(devDiff)).toBeUndefined();
      expect(devDiff.hiddenByEnvironment).toBe(2);
      expect(dr.text).not.toContain(STAGING_VALUE);
      expect(dr.text).not.toContain(stg.namespace);
      // the ownership table's totals are of the rows shown: the manager seen only on the hidden object is gone
      expect(both?.ownership.find((m) => m.manager === 'staging-hand')).toMatchObject({ objects: 1 });
      expect(dr.text).not.toContain('staging-hand');
      expect(devDiff.objects.map((o) => `${o.ref.kind}/${o.ref.name}`).sort()).toEqual([
        'ConfigMap/settings',
        'ServiceAccount/worker',
      ]);
    } finally {
      // back as it was, whatever happened above (the files below freeze this app): the render into staging
      // reverted, then resumed and applied
      const back = dev.push('Revert the ConfigMap rendered into staging', (w) => {
        writeRepoFile(w, 'app/kustomization.yaml', 'resources:\n  - settings.yaml\n  - worker.yaml\n');
        rmSync(join(w, 'app/cross.yaml'), { force: true });
      });
      await waitFor('the source has the revert', async () => sourceAt(back), { timeoutMs: 60_000, intervalMs: 2000 });
      kubectl('nonprod', [
        ...['-n', 'flux-system', 'patch', 'kustomization', dev.kustomization()],
        ...['--type=merge', '-p', JSON.stringify({ spec: { suspend: false } })],
      ]);
      await dev.waitApplied(back);
    }
  }, 400_000);
});

describe('item 9: each list holds only what the reader may read; one item it may not is a 403, recorded', () => {
  it('ApplicationSets: one whose Applications run in an environment the reader may not read is left out, and 403', async () => {
    const names = async (who: Signed) => {
      const r = await get(who, '/api/appsets');
      expect(r.status).toBe(200);
      return (r.body as { appsets: Array<{ name: string }> }).appsets.map((a) => a.name);
    };
    // dev+staging (and RBAC on argocd): both seed ApplicationSets, with their Applications
    expect(await names(s.both)).toEqual(expect.arrayContaining(['tenants', 'web']));
    const web = await get(s.both, '/api/appsets/nonprod/argocd/web');
    expect(web.status).toBe(200);
    expect((web.body.appset as { applications: Array<{ name: string }> }).applications.map((a) => a.name)).toEqual([
      'web-dev',
      'web-staging',
    ]);
    // dev only: web reaches staging, tenants is staging's
    const devNames = await names(s.dev);
    expect(devNames).not.toContain('web');
    expect(devNames).not.toContain('tenants');
    for (const name of ['web', 'tenants']) {
      const r = await get(s.dev, `/api/appsets/nonprod/argocd/${name}`);
      expect(r.status).toBe(403);
      expect(r.text).not.toContain('staging');
    }
    // every environment of nonprod, but no Kubernetes RBAC on argocd: neither
    const kubeNames = await names(s.kube);
    expect(kubeNames).not.toContain('web');
    expect(kubeNames).not.toContain('tenants');
    expect((await get(s.kube, '/api/appsets/nonprod/argocd/tenants')).status).toBe(403);
    const route = '/api/appsets/:cluster/:namespace/:name';
    expect(await denials(U.dev)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          app: 'nonprod/argocd/applicationset/web',
          data: expect.objectContaining({ route, reason: expect.stringContaining('nonprod/staging') }),
        }),
      ]),
    );
    expect(
      (await denials(U.kube)).some(
        (e) => e.app === 'nonprod/argocd/applicationset/tenants' && String(e.data.reason).includes('Kubernetes RBAC'),
      ),
    ).toBe(true);
  });

  it('prune previews: the list leaves out other environments’ (and, by RBAC, unseen apps’) previews; one is a 403', async () => {
    const request = async (app: string) => {
      const r = await as(s.admin, con.url, `/api/apps/${app}/prune-previews`, { method: 'POST' });
      expect(r.status, r.text).toBe(200);
      return (r.body.preview as { id: string }).id;
    };
    const devPreview = await request(dev.appId());
    const stgPreview = await request(stg.appId());
    const ids = async (who: Signed) =>
      ((await get(who, '/api/prune-previews')).body as { previews: Array<{ id: string }> }).previews.map((p) => p.id);
    expect(await ids(s.both)).toEqual(expect.arrayContaining([devPreview, stgPreview]));
    expect((await get(s.both, `/api/prune-previews/${stgPreview}`)).status).toBe(200);
    const devIds = await ids(s.dev);
    expect(devIds).toContain(devPreview);
    expect(devIds).not.toContain(stgPreview);
    const one = await get(s.dev, `/api/prune-previews/${stgPreview}`);
    expect(one.status).toBe(403);
    expect(one.text).not.toContain(stg.appId());
    expect((await get(s.dev, `/api/prune-previews/${devPreview}`)).status).toBe(200);
    // every environment, but no RBAC on the apps' objects (flux-system): none of them
    const kubeIds = await ids(s.kube);
    expect(kubeIds).not.toContain(devPreview);
    expect(kubeIds).not.toContain(stgPreview);
    expect((await get(s.kube, `/api/prune-previews/${devPreview}`)).status).toBe(403);
    const route = '/api/prune-previews/:id';
    expect(
      (await denials(U.dev)).some((e) => e.app === stg.appId() && e.env === 'staging' && e.data.route === route),
    ).toBe(true);
    expect((await denials(U.kube)).some((e) => e.app === dev.appId() && e.data.route === route)).toBe(true);
  });

  it('freezes: the list leaves out other environments’ (and, by RBAC, unseen apps’) freezes; one is a 403', async () => {
    const freeze = async (app: string) => {
      const r = await as(s.admin, con.url, '/api/freezes', {
        method: 'POST',
        body: { cluster: 'nonprod', app, reason: 'access filter test', minutes: 30 },
      });
      expect(r.status, r.text).toBe(200);
      return (r.body.freeze as { id: string }).id;
    };
    const devFreeze = await freeze(dev.appId());
    const stgFreeze = await freeze(stg.appId('other'));
    const ids = async (who: Signed) =>
      ((await get(who, '/api/freezes')).body as { freezes: Array<{ id: string }> }).freezes.map((f) => f.id);
    expect(await ids(s.both)).toEqual(expect.arrayContaining([devFreeze, stgFreeze]));
    expect((await get(s.both, `/api/freezes/${stgFreeze}`)).status).toBe(200);
    const devIds = await ids(s.dev);
    expect(devIds).toContain(devFreeze);
    expect(devIds).not.toContain(stgFreeze);
    for (const path of [`/api/freezes/${stgFreeze}`, `/api/freezes/${stgFreeze}/changes`]) {
      const r = await get(s.dev, path);
      expect(`${path} ${r.status}`).toBe(`${path} 403`);
      expect(r.text).not.toContain(stg.appId('other'));
    }
    expect((await get(s.dev, `/api/freezes/${devFreeze}`)).status).toBe(200);
    const kubeIds = await ids(s.kube);
    expect(kubeIds).not.toContain(devFreeze);
    expect(kubeIds).not.toContain(stgFreeze);
    expect((await get(s.kube, `/api/freezes/${devFreeze}`)).status).toBe(403);
    expect((await get(s.kube, `/api/freezes/${stgFreeze}`)).status).toBe(403);
    const route = '/api/freezes/:id';
    const other = stg.appId('other');
    expect((await denials(U.dev)).some((e) => e.app === other && e.env === 'staging' && e.data.route === route)).toBe(
      true,
    );
    expect(
      (await denials(U.kube)).some(
        (e) => e.app === other && e.data.route === route && String(e.data.reason).includes('Kubernetes RBAC'),
      ),
    ).toBe(true);
  });

  it('environment releases: another environment is a 403; only the apps (and records) the reader may see', async () => {
    type EnvReleases = { apps: Array<{ id: string }>; releases: Array<{ app?: string; appId?: string }> };
    const r = await get(s.dev, '/api/envs/staging/releases');
    expect(r.status).toBe(403);
    const mine = (await get(s.dev, '/api/envs/dev/releases')).body as unknown as EnvReleases;
    expect(mine.apps.map((a) => a.id)).toContain(dev.appId());
    const staging = (await get(s.both, '/api/envs/staging/releases')).body as unknown as EnvReleases;
    expect(staging.apps.map((a) => a.id)).toContain(stg.appId());
    // every environment, but no RBAC on any app object: no app, and no app's record
    for (const env of ['dev', 'staging']) {
      const k = await get(s.kube, `/api/envs/${env}/releases`);
      expect(k.status).toBe(200);
      expect((k.body as unknown as EnvReleases).apps).toEqual([]);
      expect(k.text).not.toContain(dev.appId());
      expect(k.text).not.toContain(stg.appId());
    }
    expect((await denials(U.dev)).some((e) => e.env === 'staging' && e.data.route === '/api/envs/:env/releases')).toBe(
      true,
    );
  });

  // the release recorder renders every nonprod app at the console's start: this app's live release may come late
  it('a release’s manifests: another environment’s app is a 403; objects RBAC hides are left out and counted', async () => {
    type Manifests = { objects: Array<{ kind: string }>; hidden?: { objects: number; reasons: string[] } };
    const live = async (app: string) => {
      let sha = '';
      await waitFor(
        `${app}'s live release recorded with its manifests`,
        async () => {
          const at = await get(
            s.admin,
            `/api/apps/${app}/releases/at?time=${encodeURIComponent(new Date().toISOString())}`,
          );
          sha = (at.body.release as { sha?: string } | null)?.sha ?? '';
          return !!sha && (await get(s.admin, `/api/apps/${app}/releases/${sha}/manifests`)).status === 200;
        },
        { timeoutMs: 200_000, intervalMs: 2000 },
      );
      return sha;
    };
    const devSha = await live(dev.appId());
    const all = (await get(s.both, `/api/apps/${dev.appId()}/releases/${devSha}/manifests`)).body as Manifests;
    expect(all.objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'ServiceAccount']);
    expect(all.hidden).toBeUndefined();
    // ConfigMaps hidden by af-kcm's RBAC: left out, counted, said why
    const r = await get(s.kcm, `/api/apps/${dev.appId()}/releases/${devSha}/manifests`);
    expect(r.status).toBe(200);
    const seen = r.body as Manifests;
    expect(seen.objects.map((o) => o.kind)).toEqual(['ServiceAccount']);
    expect(seen.hidden).toEqual({
      objects: 1,
      reasons: [`1 object hidden: your Kubernetes RBAC does not allow get on configmaps in ${dev.namespace}`],
    });
    // staging's app: a 403 for dev (the route's rule), its manifests for dev+staging
    const stgSha = await live(stg.appId());
    expect((await get(s.dev, `/api/apps/${stg.appId()}/releases/${stgSha}/manifests`)).status).toBe(403);
    const theirs = await get(s.both, `/api/apps/${stg.appId()}/releases/${stgSha}/manifests`);
    expect(theirs.status).toBe(200);
    expect(theirs.text).toContain(STAGING_VALUE);
  }, 450_000);
});
