// Impersonation mode (CONSOLE_CLUSTER_ACCESS=impersonate) against the real sandbox: the console runs with its own
// least-privilege identity (.sandbox/kubeconfig-console) and Kubernetes RBAC of the signed-in user decides what it
// sees and may do — whatever the user's console role says. The dev app whose objects users may read is this
// file's own estate (test/support/own-estate.ts: the seed's dev service in its own namespace, mapped to dev);
// staging and prod are the seed's, only read. The RBAC it grants is its run's own (test/support/impersonation.ts),
// and the app lists it checks are the seed's apps and its own (other files' estates come and go meanwhile).
// A freeze's changes and a prune preview as the reader sees them: impersonation-peek.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppsResponse, DiffResponse, TreeResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { isProblemNode } from '../../src/domain/tree-window.ts';
import { freePort, waitFor } from '../../sandbox/procs.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { canI, group, READ_ALL, rbacRun, user } from '../support/impersonation.ts';
import { bffKubeconfig } from '../support/kubeconfig.ts';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

const rbac = rbacRun('impersonation');
/** a console admin of this run only: the one user this file binds cluster-wide */
const ADMIN = `imp-admin-${rbac.run}`;
const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
/** the Flagger canary's app (issue 25): its objects are in staging too */
const PAYMENTS = 'nonprod/flux-system/kustomization/payments-staging';
const ARGO_STAGING = 'nonprod/argocd/application/edge-gateway-staging';
/**
 * the seed's nonprod Flux apps, sorted: the two environments' apps, their infra (issue 26: dependsOn), payments and
 * the HelmRelease infra-dev installs (issue 26: helm-controller)
 */
const SEED_FLUX_NONPROD = [
  'nonprod/flux-system/kustomization/digital-human-dev',
  STAGING,
  'nonprod/flux-system/kustomization/infra-dev',
  'nonprod/flux-system/kustomization/infra-staging',
  PAYMENTS,
  'nonprod/dev/helmrelease/status-page',
].sort();
/** the seed's nonprod Argo CD apps */
const SEED_ARGO_NONPROD = [
  ARGO_STAGING,
  ...[
    'checkout-staging',
    'ledger-staging',
    'tenant-alpha',
    'tenant-beta',
    'tenant-gamma',
    'web-dev',
    'web-staging',
  ].map((n) => `nonprod/argocd/application/${n}`),
];
/** every seed app, on both clusters: what the app lists are checked against (with the estate's own) */
const SEED_APPS = new Set([
  ...SEED_FLUX_NONPROD,
  ...SEED_ARGO_NONPROD,
  'prod/argocd/application/edge-gateway-prod',
  'prod/flux-system/kustomization/digital-human-prod',
  'prod/flux-system/kustomization/infra-prod',
]);
const obj = (ns: string) => `?group=apps&version=v1&kind=Deployment&namespace=${ns}&name=render-worker`;

let con: Awaited<ReturnType<typeof startTestConsole>>;
let idp: TestOidcProvider;
let dana: Signed;
let devon: Signed;
let estate: Estate;
/** the estate's app (the seed's digital-human-dev, before) and namespace (the seed's dev, before) */
let DEV = '';
let NS = '';
/** the nonprod Flux apps these users may see: the seed's and the estate's */
let FLUX_NONPROD: string[] = [];

const annotation = () =>
  (
    getJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', estate.kustomization()]).metadata as {
      annotations?: Record<string, string>;
    }
  ).annotations?.['reconcile.fluxcd.io/requestedAt'];

/** every app the user sees */
const allApps = async (s: Signed) =>
  ((await as(s, con.url, '/api/apps')).body as AppsResponse).apps.map((a) => a.id).sort();
/** the seed's apps and the estate's the user sees (other files' estates, there meanwhile, left out) */
const apps = async (s: Signed) => (await allApps(s)).filter((id) => SEED_APPS.has(id) || id === DEV);

/** OIDC sign-in through the test provider as `sub` with `groups`; the session, or undefined when refused. */
async function oidcSignIn(sub: string, groups: string[]): Promise<Signed | undefined> {
  idp.setUser({ sub, groups });
  const s = await fetch(`${con.url}/api/auth/oidc/start`, { redirect: 'manual' });
  const state = (s.headers.getSetCookie().find((c) => c.startsWith('console_oidc=')) ?? '').split(';')[0] ?? '';
  const a = await fetch(s.headers.get('location') ?? '', { redirect: 'manual' });
  const r = await fetch(a.headers.get('location') ?? '', { redirect: 'manual', headers: { Cookie: state } });
  await r.text();
  const cookie = r.headers
    .getSetCookie()
    .find((c) => c.startsWith('console_session='))
    ?.split(';')[0];
  if (r.status !== 200 || !cookie) return undefined;
  const session = (await (await fetch(`${con.url}/api/auth/session`, { headers: { Cookie: cookie } })).json()) as {
    csrfToken: string;
  };
  return { user: sub, cookie, csrf: session.csrfToken };
}

beforeAll(async () => {
  estate = await ownEstate({ name: 'impersonation', env: 'dev', files: digitalHumanTemplate('dev') });
  [DEV, NS] = [estate.appId(), estate.namespace];
  FLUX_NONPROD = [...SEED_FLUX_NONPROD, DEV].sort();
  // dana, devon and the IdP group dev-team may read everything in flux-system, dev and the estate's namespace of
  // nonprod (dev: the seed's HelmRelease there is an app they see); nothing else anywhere. OIDC groups reach
  // Kubernetes with the console's prefix (CONSOLE_OIDC_GROUPS_PREFIX, default oidc:)
  for (const ns of ['flux-system', 'dev', NS]) {
    const role = rbac.role('nonprod', 'console-test-read', READ_ALL, ns);
    rbac.bind('nonprod', 'console-test-read', role, [user('dana'), user('devon'), group('oidc:dev-team')], ns);
  }
  await waitFor(
    'RBAC in effect',
    async () =>
      canI('dana', 'get', 'apps', 'deployments', NS) &&
      canI('dana', 'get', 'helm.toolkit.fluxcd.io', 'helmreleases', 'dev') &&
      canI('devon', 'get', 'kustomize.toolkit.fluxcd.io', 'kustomizations', 'flux-system'),
    { timeoutMs: 20_000 },
  );
  idp = await startOidcProvider();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  con = await startTestConsole(
    {
      KUBECONFIG: bffKubeconfig(),
      CONSOLE_CLUSTER_ACCESS: 'impersonate',
      CONSOLE_PORT: String(port),
      CONSOLE_PUBLIC_URL: url,
      CONSOLE_OIDC_ISSUER: idp.issuer,
      CONSOLE_OIDC_CLIENT_ID: idp.clientId,
      CONSOLE_OIDC_CLIENT_SECRET: idp.clientSecret,
      CONSOLE_OIDC_REDIRECT_URL: `${url}/api/auth/oidc/callback`,
    },
    {
      accounts: {
        users: { dana: ['viewer'], devon: ['developer'], [ADMIN]: ['admin'] },
        groups: { 'dev-team': ['viewer'], 'platform-admins': ['admin'] },
      },
    },
  );
  dana = await signIn(con.url, 'dana');
  devon = await signIn(con.url, 'devon');
  await waitFor(
    'the catalog has the nonprod Flux apps',
    async () => {
      const seen = await apps(dana);
      return FLUX_NONPROD.every((id) => seen.includes(id));
    },
    { timeoutMs: 60_000 },
  );
});

afterAll(async () => {
  await con?.close();
  await idp?.close();
  rbac.cleanup();
  await estate?.teardown();
});

describe('impersonation: Kubernetes RBAC of the signed-in user decides', () => {
  it('a console viewer lists only apps whose objects its Kubernetes RBAC lets it get (no Argo CD app, nothing in prod)', async () => {
    expect(await apps(dana)).toEqual(FLUX_NONPROD);
    // the hidden apps exist in the console's catalog: hidden, answered like unknown ones
    expect((await as(dana, con.url, `/api/apps/${ARGO_STAGING}`)).status).toBe(404);
    expect((await as(dana, con.url, '/api/apps/prod/flux-system/kustomization/digital-human-prod')).status).toBe(404);
  });

  it("the staging tree leaks no object of namespace staging (RBAC forbids it), while the dev tree shows dev's objects", async () => {
    const list = ((await as(dana, con.url, '/api/apps')).body as AppsResponse).apps;
    expect(list.find((a) => a.id === STAGING)?.inventoryCount).toBeGreaterThan(3);
    const staging = (await as(dana, con.url, `/api/apps/${STAGING}/tree`)).body as unknown as TreeResponse;
    expect(staging.nodes.filter((n) => n.ref.namespace === 'staging')).toEqual([]);
    const dev = (await as(dana, con.url, `/api/apps/${DEV}/tree`)).body as unknown as TreeResponse;
    const devKinds = new Set(dev.nodes.filter((n) => n.ref.namespace === NS).map((n) => n.ref.kind));
    for (const k of ['Deployment', 'ReplicaSet', 'Pod', 'Service', 'ConfigMap']) expect(devKinds).toContain(k);
  });

  it('a windowed tree (issue 27) holds what the whole tree holds, page by page, and its filter and counts leak nothing RBAC hides', async () => {
    const tree = async (app: string, q = '') =>
      (await as(dana, con.url, `/api/apps/${app}/tree${q}`)).body as unknown as TreeResponse;
    const whole = await tree(DEV);
    const roots = whole.nodes.filter((n) => !n.parentId).map((n) => n.id);
    expect(roots.length).toBeGreaterThan(3);
    // the roots, two at a time, each page after the cursor of the one before (a keyset walk over the tree's own
    // order: a root whose health flips between pages, as the HPA does, is never skipped nor pushes another out),
    // and the count is said on each page. Every root is sent; one sent twice is one the first window promoted as
    // a problem (the view keeps one copy)
    const pages: TreeResponse[] = [];
    for (let after: string | undefined; pages.length === 0 || after; after = pages[pages.length - 1]?.next) {
      expect(pages.length).toBeLessThanOrEqual(Math.ceil(roots.length / 2) + 1);
      const page = await tree(DEV, `?window=2&depth=0${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      expect(page.topCount).toBe(roots.length);
      expect(page.partial).toBe(true);
      expect(page.nodes.length).toBeGreaterThan(0);
      pages.push(page);
    }
    const paged = pages.flatMap((p) => p.nodes.map((n) => n.id));
    expect([...new Set(paged)].sort()).toEqual([...roots].sort());
    const promoted = new Set(pages[0]?.nodes.filter(isProblemNode).map((n) => n.id));
    const repeats = paged.filter((id, i) => paged.indexOf(id) !== i);
    for (const id of repeats) expect(promoted).toContain(id);
    expect(new Set(repeats).size).toBe(repeats.length);
    // what the view asks for again on a live update: a page as the range it covered (the whole set, here)
    const range = await tree(DEV, `?window=2&depth=0&after=%5E&through=%24`);
    expect(range.nodes.map((n) => n.id).sort()).toEqual([...roots].sort());
    expect(range.next).toBeUndefined();
    // a ReplicaSet's Pods, one at a time, under it
    const rs = whole.nodes.find((n) => n.ref.kind === 'ReplicaSet' && n.childCount > 1);
    expect(rs).toBeDefined();
    const first = await tree(DEV, `?window=1&depth=0&under=${encodeURIComponent(rs?.id ?? '')}`);
    expect(first.topCount).toBe(rs?.childCount);
    expect(first.nodes).toHaveLength(1);
    expect(first.nodes[0]?.parentId).toBe(rs?.id);
    // a filter is answered from the whole tree: the same matches as the browser would find in it
    const found = await tree(DEV, '?window=1&depth=1&q=render-worker&kind=Pod');
    const expected = whole.nodes.filter(
      (n) => n.ref.kind === 'Pod' && `${n.ref.name} ${n.reason}`.includes('render-worker'),
    );
    expect(found.matched).toBe(expected.length);
    expect(
      found.nodes
        .filter((n) => n.ref.kind === 'Pod')
        .map((n) => n.id)
        .sort(),
    ).toEqual(expected.map((n) => n.id).sort());
    // staging: RBAC hides the namespace, and the window's filter, counts and kinds say nothing of it either
    const staging = await tree(STAGING, '?window=50&depth=3&q=staging');
    expect(staging.nodes.filter((n) => n.ref.namespace === 'staging')).toEqual([]);
    const stagingWhole = await tree(STAGING, '?window=5000&depth=10');
    expect(stagingWhole.nodes.filter((n) => n.ref.namespace === 'staging')).toEqual([]);
    expect(stagingWhole.kinds).toEqual([...new Set(stagingWhole.nodes.map((n) => n.ref.kind))].sort());
    // every childCount is what this user may see below the node (the RBAC filter recounts it)
    for (const t of [whole, stagingWhole])
      for (const n of t.nodes) expect(n.childCount).toBe(t.nodes.filter((c) => c.parentId === n.id).length);
    // a node that is not in the tree is said to be missing (never an empty page that reads as "no children")
    const gone = await tree(
      DEV,
      `?window=5&depth=0&under=${encodeURIComponent(`nonprod/apps/ReplicaSet/${NS}/not-there`)}`,
    );
    expect(gone).toMatchObject({ nodes: [], missing: true });
    expect((await as(dana, con.url, `/api/apps/${DEV}/tree?window=0`)).status).toBe(400);
    const badCursor = await as(dana, con.url, `/api/apps/${DEV}/tree?window=5&after=tts-gateway`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.text).toContain('after is not a node id');
    expect((await as(dana, con.url, `/api/apps/${DEV}/tree?window=5&through=%24`)).status).toBe(400);
    expect((await as(dana, con.url, `/api/apps/${DEV}/tree?window=5&q=a&q=b`)).status).toBe(400);
  });

  it('a console viewer reading a staging Deployment by object reference, or its events, gets 403 from Kubernetes RBAC', async () => {
    const o = await as(dana, con.url, `/api/clusters/nonprod/object${obj('staging')}`);
    expect(o.status).toBe(403);
    expect(o.text).not.toContain('registry.example.com');
    expect((await as(dana, con.url, `/api/clusters/nonprod/events${obj('staging')}`)).status).toBe(403);
    const denied = await as(con.admin, con.url, '/api/evidence?type=access.denied&limit=100');
    expect((denied.body as { events: EvidenceEvent[] }).events.find((e) => e.actor === 'dana')).toMatchObject({
      cluster: 'nonprod',
      data: {
        action: 'app.read',
        reason: expect.stringContaining('Kubernetes RBAC does not let dana get Deployment in staging'),
      },
    });
    // the same reads in the dev estate's namespace are allowed
    const ok = await as(dana, con.url, `/api/clusters/nonprod/object${obj(NS)}`);
    expect(ok.status).toBe(200);
    expect(String(ok.body.yaml)).toContain('registry.example.com/digital-human/render-worker');
    expect((await as(dana, con.url, `/api/clusters/nonprod/events${obj(NS)}`)).status).toBe(200);
  });

  it("a console viewer's diff of the staging app carries no live staging object", async () => {
    const r = await as(dana, con.url, `/api/apps/${STAGING}/diff`);
    expect(r.status).toBe(200);
    const d = r.body as unknown as DiffResponse;
    expect(d.objects.filter((o) => o.ref.namespace === 'staging').length).toBeGreaterThan(3);
    expect(d.objects.filter((o) => o.ref.namespace === 'staging' && o.liveYaml !== undefined)).toEqual([]);
  });

  it('a console developer cannot reconcile when Kubernetes RBAC forbids the patch (the impersonated PATCH is refused)', async () => {
    const before = annotation();
    expect(canI('devon', 'patch', 'kustomize.toolkit.fluxcd.io', 'kustomizations', 'flux-system')).toBe(false);
    expect(canI('devon', 'get', 'kustomize.toolkit.fluxcd.io', 'kustomizations', 'flux-system')).toBe(true);
    const r = await as(devon, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' });
    expect(r.status).toBe(403);
    // refused by the cluster, not by the console's role check (devon's console role allows reconciling)
    expect(r.body).toMatchObject({ error: { code: 'Forbidden', message: expect.stringContaining('cannot annotate') } });
    expect(annotation()).toBe(before);
    // the intent was recorded before acting (evidence fails closed), and its outcome says it failed
    const ev = await as(con.admin, con.url, '/api/evidence?type=app.reconcile-requested&limit=100');
    expect(ev.status).toBe(200);
    const intents = (ev.body as { events: EvidenceEvent[] }).events.filter((e) => e.actor === 'devon');
    expect(intents).toHaveLength(1);
    const failed = await as(con.admin, con.url, '/api/evidence?type=action.failed&limit=100');
    expect((failed.body as { events: EvidenceEvent[] }).events.filter((e) => e.actor === 'devon')).toMatchObject([
      { app: DEV, data: { action: 'app.reconcile-requested', intentSeq: intents[0]?.seq } },
    ]);
    // the cluster's refusal is a denial like any other: recorded
    const denied = await as(con.admin, con.url, '/api/evidence?type=access.denied&limit=100');
    expect((denied.body as { events: EvidenceEvent[] }).events.find((e) => e.actor === 'devon')).toMatchObject({
      app: DEV,
      data: { action: 'app.reconcile', method: 'POST', reason: expect.stringContaining('forbidden') },
    });
  });

  it('the console admin role does not bypass Kubernetes RBAC: no binding, no apps; a binding in nonprod shows nonprod only', async () => {
    // a console admin of this run: nobody else binds it, so it sees nothing at all
    const admin = await signIn(con.url, ADMIN);
    expect(await allApps(admin)).toEqual([]);
    expect((await as(admin, con.url, `/api/clusters/nonprod/object${obj(NS)}`)).status).toBe(403);
    const read = rbac.role('nonprod', 'console-test-read', READ_ALL);
    rbac.bind('nonprod', 'console-test-admin-read', read, [user(ADMIN)]);
    // yes/no answers are cached for a few seconds per user
    await waitFor('admin sees the nonprod apps', async () => (await apps(admin)).includes(ARGO_STAGING), {
      timeoutMs: 30_000,
      intervalMs: 1000,
    });
    expect(await apps(admin)).toEqual([...FLUX_NONPROD, ...SEED_ARGO_NONPROD].sort());
    const staging = (await as(admin, con.url, `/api/apps/${STAGING}/tree`)).body as unknown as TreeResponse;
    expect(staging.nodes.filter((n) => n.ref.namespace === 'staging').length).toBeGreaterThan(3);
  });

  it("an OIDC user's groups are what Kubernetes RBAC sees: a dev-team member sees the dev app and its objects", async () => {
    const g = await oidcSignIn('gabriel', ['dev-team']);
    expect(g).toBeDefined();
    expect(await apps(g as Signed)).toEqual(FLUX_NONPROD);
    expect((await as(g as Signed, con.url, `/api/clusters/nonprod/object${obj(NS)}`)).status).toBe(200);
    expect((await as(g as Signed, con.url, `/api/clusters/nonprod/object${obj('staging')}`)).status).toBe(403);
    // the same person without the group sees nothing, even as a console admin: the group carried the access
    const h = await oidcSignIn('gabriel', ['platform-admins']);
    expect(h).toBeDefined();
    expect(await allApps(h as Signed)).toEqual([]);
  });

  it('an IdP group named system:masters does not make the console act as cluster-admin for that user', async () => {
    const s = await oidcSignIn('mallory', ['dev-team', 'system:masters']);
    // refusing the sign-in is fine; signed in, the user must see no more than dev-team's RBAC allows
    const outcome = s
      ? {
          apps: await apps(s),
          stagingObject: (await as(s, con.url, `/api/clusters/nonprod/object${obj('staging')}`)).status,
          stagingEvents: (await as(s, con.url, `/api/clusters/nonprod/events${obj('staging')}`)).status,
        }
      : 'refused';
    expect(['refused', { apps: FLUX_NONPROD, stagingObject: 403, stagingEvents: 403 }]).toContainEqual(outcome);
  });
});
