// Issue #14, "Least privilege that really works": the BFF as the console's own identity (user gitops-console,
// deploy/rbac.yaml exactly as shipped) diffs by server-side dry-run and reconciles, and is refused what the
// file does not grant. Kubernetes authorizes a dry-run with the verb of the real request: a server-side apply
// `PATCH ?dryRun=All` needs `patch`, and `create` too when the object does not exist yet.
// The apps are this test's own estate (test/support/own-estate.ts): the seed's dev service as a Flux app and the
// seed's edge-gateway as an Argo CD app, both in the estate's namespace, where the probe Secret lives too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { DiffResponse } from '../../src/api/schemas.ts';
import { REPO_ROOT, kubectl } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import type { ClusterConnection } from '../../src/server/kube/connection.ts';
import { as } from '../support/auth.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';
import { bffKubeconfig, consoleConnection } from '../support/kubeconfig.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';
import { seedFiles } from '../../sandbox/seed.ts';

const SUFFIX = Date.now().toString(36);
const PROBE_SECRET = `lp-existing-${SUFFIX}`;
/** the Argo CD app: the seed's edge-gateway files */
const EDGE = 'argo/edge-gateway';

let conn: ClusterConnection;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let estate: Estate;
/** the estate's namespace (the seed's dev, before) */
let NS = '';
const DEV = () => estate.appId();
const ARGO = () => estate.argoAppId('edge');

/** A server-side apply dry-run as the diff sends it (src/server/diff/app-diff.ts). */
const dryRunApply = (path: string, obj: object) =>
  conn.request('PATCH', `${path}?dryRun=All&fieldManager=kustomize-controller&force=true`, {
    body: JSON.stringify(obj),
    contentType: 'application/apply-patch+yaml',
    timeoutMs: 20_000,
  });
const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS },
  data: { probe: 'least-privilege' },
});
const secret = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NS },
  type: 'Opaque',
  stringData: { token: `lp-${SUFFIX}` },
});

beforeAll(async () => {
  const seed = seedFiles();
  estate = await ownEstate({
    name: 'least-privilege',
    env: 'dev',
    files: {
      ...digitalHumanTemplate('dev'),
      ...Object.fromEntries(Object.entries(seed).filter(([path]) => path.startsWith(`${EDGE}/`))),
    },
    apps: [{ name: 'app', path: 'overlays/dev' }],
    argoApps: [{ name: 'edge', path: EDGE }],
  });
  NS = estate.namespace;
  conn = consoleConnection(estate.cluster);
  // set-up as admin (scenario helper): an existing Secret the console may dry-run but not read
  kubectl(
    estate.cluster,
    ['apply', '--server-side', '--field-manager=test', '-f', '-'],
    JSON.stringify(secret(PROBE_SECRET)),
  );
  // explicitly the console's kubeconfig: this file is about that identity, whatever the default becomes
  con = await startTestConsole({ KUBECONFIG: bffKubeconfig() });
  await waitFor(
    'both apps listed',
    async () =>
      (await authedFetch(`${con.url}/api/apps/${DEV()}`)).status === 200 &&
      (await authedFetch(`${con.url}/api/apps/${ARGO()}`)).status === 200,
    { timeoutMs: 60_000 },
  );
});

afterAll(async () => {
  await con?.close();
  conn?.close();
  // the probe Secret goes with the estate's namespace
  await estate?.teardown();
});

describe("the console's identity", () => {
  it('is deploy/rbac.yaml exactly as shipped (the sandbox applies the file, also when it reuses a running one)', () => {
    const docs = parseAllDocuments(readFileSync(join(REPO_ROOT, 'deploy', 'rbac.yaml'), 'utf8')).map(
      (d) => d.toJSON() as { kind: string; rules?: unknown[]; subjects?: unknown[] },
    );
    const role = docs.find((d) => d.kind === 'ClusterRole');
    const binding = docs.find((d) => d.kind === 'ClusterRoleBinding');
    for (const cluster of ['nonprod', 'prod']) {
      const live = JSON.parse(kubectl(cluster, ['get', 'clusterrole', 'gitops-console', '-o', 'json'])) as {
        rules: unknown[];
      };
      expect(live.rules).toEqual(role?.rules);
      const liveBinding = JSON.parse(
        kubectl(cluster, ['get', 'clusterrolebinding', 'gitops-console', '-o', 'json']),
      ) as {
        subjects: unknown[];
      };
      expect(liveBinding.subjects).toEqual(binding?.subjects);
    }
  });

  it('may dry-run apply what the diff sends: patch for live objects, patch + create for objects not live yet', async () => {
    // a live ConfigMap of the dev app: patch
    const live = await dryRunApply(`/api/v1/namespaces/${NS}/configmaps/render-worker-config`, {
      ...configMap('render-worker-config'),
      data: { 'max-sessions': '8', codec: 'h264' },
    });
    expect(live.status, live.body).toBe(200);
    // a ConfigMap in Git but not live: the apply would create it, so it is authorized as create too
    const name = `lp-new-${SUFFIX}`;
    const created = await dryRunApply(`/api/v1/namespaces/${NS}/configmaps/${name}`, configMap(name));
    expect(created.status, created.body).toBe(201);
    // ...and it is a dry-run: nothing was created
    expect(() => kubectl(estate.cluster, ['-n', NS, 'get', 'configmap', name])).toThrow(/NotFound|not found/);
    // a live Deployment (apps), an HPA (autoscaling/v2) and a Service: the kinds the seed apps render
    for (const [path, obj] of [
      [
        `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers/render-worker`,
        { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'render-worker' } },
      ],
      [
        `/api/v1/namespaces/${NS}/services/render-worker`,
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'render-worker' } },
      ],
      [
        `/apis/apps/v1/namespaces/${NS}/deployments/render-worker`,
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'render-worker' } },
      ],
    ] as const) {
      // authorized (not 403); an apply that drops required fields may be invalid (422), which is fine here
      const r = await dryRunApply(path, obj);
      expect(`${path} ${r.status}`).not.toBe(`${path} 403`);
    }
  });

  it('never reads Secrets, may dry-run a live one (patch) but not create one, and may not delete or touch RBAC', async () => {
    expect((await conn.request('GET', `/api/v1/namespaces/${NS}/secrets/${PROBE_SECRET}`)).status).toBe(403);
    expect((await conn.request('GET', `/api/v1/namespaces/${NS}/secrets`)).status).toBe(403);
    expect((await conn.request('GET', '/api/v1/secrets?watch=true&timeoutSeconds=1')).status).toBe(403);
    const patched = await dryRunApply(`/api/v1/namespaces/${NS}/secrets/${PROBE_SECRET}`, secret(PROBE_SECRET));
    expect(patched.status, patched.body).toBe(200);
    // no create on Secrets: with it, create + patch would mint a token Secret and read it back
    const fresh = await dryRunApply(`/api/v1/namespaces/${NS}/secrets/lp-new-${SUFFIX}`, secret(`lp-new-${SUFFIX}`));
    expect(fresh.status).toBe(403);
    expect((JSON.parse(fresh.body) as { message: string }).message).toMatch(/cannot create resource "secrets"/);
    // delete is for approved prunes, and never of Secrets or Namespaces
    const del = await conn.request('DELETE', `/api/v1/namespaces/${NS}/secrets/${PROBE_SECRET}?dryRun=All`);
    expect(del.status).toBe(403);
    expect((await conn.request('DELETE', `/api/v1/namespaces/${NS}?dryRun=All`)).status).toBe(403);
    const role = await dryRunApply(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/lp-${SUFFIX}`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: `lp-${SUFFIX}`, namespace: NS },
      rules: [],
    });
    expect(role.status).toBe(403);
  });
});

describe('the BFF as that identity', () => {
  it.each([
    ['Flux', DEV, ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Service']],
    ['Argo CD', ARGO, ['Deployment', 'Service']],
  ])(
    'diffs every object of the %s app by server-side dry-run (or a proof that applying changes nothing), never the normalized fallback',
    async (_, app, kinds) => {
      const res = await authedFetch(`${con.url}/api/apps/${app()}/diff`);
      expect(res.status).toBe(200);
      const d = (await res.json()) as DiffResponse;
      expect(d.state).toBe('ok');
      const rendered = d.objects.filter((o) => o.status !== 'extraneous');
      for (const kind of kinds) expect(rendered.some((o) => o.ref.kind === kind)).toBe(true);
      expect(
        d.objects
          .filter((o) => o.mode === 'normalized' || /dry-run|normalized/.test(o.note ?? ''))
          .map((o) => `${o.ref.kind} ${o.ref.name}: ${o.mode} ${o.note ?? ''}`),
      ).toEqual([]);
      expect(d.summary).not.toMatch(/normalized/);
    },
  );

  it('reconciles a Flux and an Argo CD app (patch of the Kustomization, its GitRepository, the Application)', async () => {
    for (const id of [DEV(), ARGO()]) {
      const r = await as(con.admin, con.url, `/api/apps/${id}/reconcile`, { method: 'POST' });
      expect(`${id} ${r.status} ${r.text.slice(0, 300)}`).toMatch(new RegExp(`^${id} 20[02] `));
    }
  });
});
