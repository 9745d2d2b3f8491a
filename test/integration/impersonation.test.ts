// Impersonation mode (CONSOLE_CLUSTER_ACCESS=impersonate) against the real sandbox: the console runs with its own
// least-privilege identity (.sandbox/kubeconfig-console) and Kubernetes RBAC of the signed-in user decides what it
// sees and may do — whatever the user's console role says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppsResponse, DiffResponse, TreeResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import { freePort, waitFor } from '../../sandbox/procs.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { bffKubeconfig } from '../support/kubeconfig.ts';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';

const LABEL = 'console-test=impersonation';
const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
const ARGO_STAGING = 'nonprod/argocd/application/edge-gateway-staging';
const obj = (ns: string) => `?group=apps&version=v1&kind=Deployment&namespace=${ns}&name=render-worker`;

let con: Awaited<ReturnType<typeof startTestConsole>>;
let idp: TestOidcProvider;
let dana: Signed;
let devon: Signed;

const meta = (name: string, ns?: string) => ({
  name,
  ...(ns ? { namespace: ns } : {}),
  labels: { 'console-test': 'impersonation' },
});
const readAll = (kind: 'Role' | 'ClusterRole', ns?: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: meta('console-test-read', ns),
  rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] }],
});
const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string, subjects: object[], ns?: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: meta(name, ns),
  roleRef: {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole',
    name: 'console-test-read',
  },
  subjects,
});
const user = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name });
const group = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name });
const apply = (cluster: string, o: object) => kubectl(cluster, ['apply', '-f', '-'], JSON.stringify(o));

function cleanup(): void {
  for (const c of ['nonprod', 'prod']) {
    kubectl(c, ['delete', 'rolebinding,role', '-A', '-l', LABEL, '--ignore-not-found', '--wait=false']);
    kubectl(c, ['delete', 'clusterrolebinding,clusterrole', '-l', LABEL, '--ignore-not-found', '--wait=false']);
  }
}

/** What Kubernetes itself answers for `who` (a SubjectAccessReview asked with the sandbox admin identity). */
function canI(who: string, verb: string, groupName: string, resource: string, ns: string): boolean {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: who,
      groups: ['system:authenticated'],
      resourceAttributes: { verb, group: groupName, resource, namespace: ns },
    },
  };
  const out = JSON.parse(kubectl('nonprod', ['create', '-f', '-', '-o', 'json'], JSON.stringify(review))) as {
    status?: { allowed?: boolean };
  };
  return out.status?.allowed === true;
}

const annotation = () =>
  (
    getJson('nonprod', ['-n', 'flux-system', 'get', 'kustomization', 'digital-human-dev']).metadata as {
      annotations?: Record<string, string>;
    }
  ).annotations?.['reconcile.fluxcd.io/requestedAt'];

const apps = async (s: Signed) =>
  ((await as(s, con.url, '/api/apps')).body as AppsResponse).apps.map((a) => a.id).sort();

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
  cleanup();
  // dana, devon and the IdP group dev-team may read everything in flux-system and dev of nonprod; nothing else
  // anywhere. OIDC groups reach Kubernetes with the console's prefix (CONSOLE_OIDC_GROUPS_PREFIX, default oidc:)
  for (const ns of ['flux-system', 'dev']) {
    apply('nonprod', readAll('Role', ns));
    apply(
      'nonprod',
      binding('RoleBinding', 'console-test-read', [user('dana'), user('devon'), group('oidc:dev-team')], ns),
    );
  }
  apply('nonprod', readAll('ClusterRole'));
  await waitFor(
    'RBAC in effect',
    async () =>
      canI('dana', 'get', 'apps', 'deployments', 'dev') &&
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
        users: { dana: ['viewer'], devon: ['developer'] },
        groups: { 'dev-team': ['viewer'], 'platform-admins': ['admin'] },
      },
    },
  );
  dana = await signIn(con.url, 'dana');
  devon = await signIn(con.url, 'devon');
  await waitFor('the catalog has the nonprod Flux apps', async () => (await apps(dana)).length >= 2, {
    timeoutMs: 60_000,
  });
});

afterAll(async () => {
  await con?.close();
  await idp?.close();
  cleanup();
});

describe('impersonation: Kubernetes RBAC of the signed-in user decides', () => {
  it('a console viewer lists only apps whose objects its Kubernetes RBAC lets it get (no Argo CD app, nothing in prod)', async () => {
    expect(await apps(dana)).toEqual([DEV, STAGING]);
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
    const devKinds = new Set(dev.nodes.filter((n) => n.ref.namespace === 'dev').map((n) => n.ref.kind));
    for (const k of ['Deployment', 'ReplicaSet', 'Pod', 'Service', 'ConfigMap']) expect(devKinds).toContain(k);
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
    // the same reads in dev are allowed
    const ok = await as(dana, con.url, `/api/clusters/nonprod/object${obj('dev')}`);
    expect(ok.status).toBe(200);
    expect(String(ok.body.yaml)).toContain('registry.example.com/digital-human/render-worker');
    expect((await as(dana, con.url, `/api/clusters/nonprod/events${obj('dev')}`)).status).toBe(200);
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
    expect(await apps(con.admin)).toEqual([]);
    expect((await as(con.admin, con.url, `/api/clusters/nonprod/object${obj('dev')}`)).status).toBe(403);
    apply('nonprod', binding('ClusterRoleBinding', 'console-test-admin-read', [user('admin')]));
    // yes/no answers are cached for a few seconds per user
    await waitFor('admin sees the nonprod apps', async () => (await apps(con.admin)).includes(ARGO_STAGING), {
      timeoutMs: 30_000,
      intervalMs: 1000,
    });
    expect(await apps(con.admin)).toEqual([DEV, STAGING, ARGO_STAGING].sort());
    const staging = (await as(con.admin, con.url, `/api/apps/${STAGING}/tree`)).body as unknown as TreeResponse;
    expect(staging.nodes.filter((n) => n.ref.namespace === 'staging').length).toBeGreaterThan(3);
  });

  it("an OIDC user's groups are what Kubernetes RBAC sees: a dev-team member sees the dev app and its objects", async () => {
    const g = await oidcSignIn('gabriel', ['dev-team']);
    expect(g).toBeDefined();
    expect(await apps(g as Signed)).toEqual([DEV, STAGING]);
    expect((await as(g as Signed, con.url, `/api/clusters/nonprod/object${obj('dev')}`)).status).toBe(200);
    expect((await as(g as Signed, con.url, `/api/clusters/nonprod/object${obj('staging')}`)).status).toBe(403);
    // the same person without the group sees nothing, even as a console admin: the group carried the access
    const h = await oidcSignIn('gabriel', ['platform-admins']);
    expect(h).toBeDefined();
    expect(await apps(h as Signed)).toEqual([]);
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
    expect(['refused', { apps: [DEV, STAGING], stagingObject: 403, stagingEvents: 403 }]).toContainEqual(outcome);
  });
});
