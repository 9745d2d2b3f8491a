// Test support for the controller-prune unit tests (stamps.test.ts, approval-params.test.ts; imported only by
// tests): an in-memory apiserver with ConfigMaps in namespace dev, the Namespaces (dev governed or not, the
// approvals namespace when the policy is "installed"), the approvals ConfigMap, and one Argo CD Application.
// GET, POST (the approvals ConfigMap), merge PATCH with uid/resourceVersion preconditions (`null` removes a key),
// DELETE with preconditions; lists of the identity kinds. And a PruneService over it with the evidence store a
// test opens (a real SQLite one).
import { parseGrant } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import { APPROVALS_CONFIGMAP, APPROVALS_NAMESPACE, GOVERNED_LABEL } from '../../domain/prune-approval.ts';
import type { Principal } from '../auth/index.ts';
import { EvidenceRecorder, type EvidenceStore } from '../evidence/index.ts';
import { KubeError, type ClusterConnection, type KubeResponse } from '../kube/connection.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { pruneContext } from './context.ts';
import type { PreviewDoc, PruneServiceDeps } from './model.ts';
import { PruneService } from './service.ts';
import { PruneStore } from './store.ts';

type Json = Record<string, unknown>;
export type Meta = {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
  deletionTimestamp?: string;
};
export type Obj = { metadata: Meta } & Json;

const user = (name: string, ...grants: string[]): Principal => ({
  name,
  source: 'local',
  groups: [],
  grants: grants.map(parseGrant),
});
export const dev = user('dev', 'developer@nonprod/dev');
export const rev1 = user('rev1', 'reviewer@nonprod/dev');

const PARAM = `/api/v1/namespaces/${APPROVALS_NAMESPACE}/configmaps/${APPROVALS_CONFIGMAP}`;
const APP_PATH = '/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/web';

function mergeInto(target: Json, patch: Json): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k];
    else if (typeof v === 'object' && !Array.isArray(v) && typeof target[k] === 'object' && target[k] !== null)
      mergeInto(target[k] as Json, v as Json);
    else target[k] = typeof v === 'object' && v !== null ? JSON.parse(JSON.stringify(v)) : v;
  }
}

export class FakeCluster {
  /** by API path */
  objects = new Map<string, Obj>();
  patches: Array<{ path: string; body: Json }> = [];
  deletes: Array<{ path: string; body: Json }> = [];
  /** items served for the identity kinds' list paths (absent: 404, the API is not served) */
  lists = new Map<string, Obj[]>();
  /** paths whose GET fails with 500 */
  failing = new Set<string>();
  /** called before each request (a test changes the world in between) */
  before: ((method: string, path: string) => void) | undefined;
  private rv = 100;

  constructor(opts: { governed?: boolean; installed?: boolean } = {}) {
    this.put('/api/v1/namespaces/dev', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: this.meta('dev', undefined, opts.governed === false ? {} : { [GOVERNED_LABEL]: 'true' }),
    });
    if (opts.installed !== false) {
      this.put(`/api/v1/namespaces/${APPROVALS_NAMESPACE}`, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: this.meta(APPROVALS_NAMESPACE),
      });
      this.put(PARAM, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: this.meta(APPROVALS_CONFIGMAP, APPROVALS_NAMESPACE),
      });
    }
    this.put(APP_PATH, {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: this.meta('web', 'argocd'),
      spec: { syncPolicy: { automated: { prune: true }, syncOptions: ['Prune=confirm'] } },
      status: { resources: [] },
    });
  }

  private meta(name: string, namespace?: string, labels: Record<string, string> = {}): Meta {
    return {
      name,
      ...(namespace ? { namespace } : {}),
      uid: `uid-${namespace ?? ''}-${name}-${++this.rv}`,
      resourceVersion: String(this.rv),
      annotations: {},
      labels,
    };
  }

  put(path: string, o: Obj): void {
    this.objects.set(path, o);
  }

  /** A ConfigMap in namespace dev (a new uid each time). */
  add(name: string): Obj {
    const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: this.meta(name, 'dev') };
    this.put(`/api/v1/namespaces/dev/configmaps/${name}`, o);
    return o;
  }
  cm(name: string): Obj | undefined {
    return this.objects.get(`/api/v1/namespaces/dev/configmaps/${name}`);
  }
  touch(name: string): void {
    const o = this.cm(name);
    if (o) o.metadata.resourceVersion = String(++this.rv);
  }
  remove(name: string): void {
    this.objects.delete(`/api/v1/namespaces/dev/configmaps/${name}`);
  }
  get application(): Obj {
    return this.objects.get(APP_PATH) as Obj;
  }
  /** The approvals ConfigMap's data ({} when it has none; undefined when it is missing). */
  approvals(): Record<string, string> | undefined {
    const o = this.objects.get(PARAM);
    return o ? ((o.data as Record<string, string> | undefined) ?? {}) : undefined;
  }

  conn(): ClusterConnection {
    const answer = (status: number, body: unknown): KubeResponse => ({
      status,
      headers: {},
      body: JSON.stringify(body),
    });
    const c = {
      name: 'nonprod',
      request: async (method: string, path: string, opts: { body?: string } = {}): Promise<KubeResponse> => {
        this.before?.(method, path);
        const [p = ''] = path.split('?');
        const o = this.objects.get(p);
        if (method === 'GET') {
          if (this.failing.has(p)) return answer(500, { message: 'boom' });
          const list = this.lists.get(p);
          if (list) return answer(200, { items: list });
          return o ? answer(200, o) : answer(404, {});
        }
        const body = JSON.parse(opts.body ?? '{}') as Json;
        if (method === 'POST') {
          const m = body.metadata as Meta;
          if (!this.objects.has(`/api/v1/namespaces/${m.namespace ?? ''}`)) return answer(404, {});
          const target = `${p}/${m.name}`;
          if (this.objects.has(target)) return answer(409, {});
          this.put(target, { ...body, metadata: { ...this.meta(m.name, m.namespace), labels: m.labels ?? {} } } as Obj);
          return answer(201, this.objects.get(target));
        }
        if (method === 'PATCH') {
          this.patches.push({ path, body });
          if (!o) return answer(404, {});
          const m = (body.metadata ?? {}) as Partial<Meta>;
          if (
            (m.uid && m.uid !== o.metadata.uid) ||
            (m.resourceVersion && m.resourceVersion !== o.metadata.resourceVersion)
          )
            return answer(409, { message: 'the object has been modified' });
          const { uid: _u, resourceVersion: _r, ...rest } = m;
          mergeInto(o, { ...body, metadata: rest });
          o.metadata.resourceVersion = String(++this.rv);
          return answer(200, o);
        }
        if (method === 'DELETE') {
          this.deletes.push({ path, body });
          if (!o) return answer(404, {});
          const pre = (body.preconditions ?? {}) as { uid?: string; resourceVersion?: string };
          if (pre.uid !== o.metadata.uid || pre.resourceVersion !== o.metadata.resourceVersion)
            return answer(409, { message: 'Precondition failed' });
          this.objects.delete(p);
          return answer(200, o);
        }
        return answer(405, {});
      },
      json: async (_m: string, path: string) => {
        if (path === '/api/v1')
          return {
            resources: [
              { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
              { name: 'namespaces', kind: 'Namespace', namespaced: false },
            ],
          };
        if (path === '/apis/argoproj.io/v1alpha1')
          return { resources: [{ name: 'applications', kind: 'Application', namespaced: true }] };
        throw new KubeError('not found', 'nonprod', 404);
      },
      httpError: (res: KubeResponse, what: string) => new KubeError(`${what}: ${res.status}`, 'nonprod', res.status),
    };
    return c as unknown as ClusterConnection;
  }
}

/** A PruneService (and its context) over a FakeCluster; the app's inventory is every ConfigMap named in `live`. */
export function setup(
  ev: EvidenceStore,
  opts: {
    controller: 'flux' | 'argocd';
    inGit: string[];
    live: string[];
    cluster?: FakeCluster;
    batchSize?: number;
    ttlMs?: number;
  },
) {
  const cluster = opts.cluster ?? new FakeCluster();
  for (const n of opts.live) cluster.add(n);
  const recorder = new EvidenceRecorder(ev, { warn() {}, error() {} });
  const flux = opts.controller === 'flux';
  const app: App = {
    id: flux ? 'nonprod/flux-system/kustomization/web' : 'nonprod/argocd/application/web',
    cluster: 'nonprod',
    controller: opts.controller,
    kind: flux ? 'Kustomization' : 'Application',
    namespace: flux ? 'flux-system' : 'argocd',
    name: 'web',
    env: 'dev',
    source: { revisionWanted: 'main@sha1:1', revisionObserved: 'main@sha1:0' },
    automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
    sync: 'Synced',
    health: 'Healthy',
    healthMessage: '',
    conditions: [],
    inventory: opts.live.map((name) => ({
      cluster: 'nonprod',
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      namespace: 'dev',
      name,
    })),
    warnings: [],
  };
  const index = { watches: () => false, get: () => undefined, trackedBy: () => [], childrenOf: () => [] };
  const deps: PruneServiceDeps = {
    recorder,
    store: new PruneStore<PreviewDoc>(ev),
    index: index as unknown as ObjectIndex,
    app: () => app,
    conn: () => cluster.conn(),
    listed: () => true,
    render: async () => ({
      objects: opts.inGit.map((n) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: n, namespace: 'dev' },
      })),
      renderer: 'test',
      revision: 'main@sha1:1',
      renderHash: 'h',
    }),
  };
  const options = { batchSize: opts.batchSize ?? 10, ttlMs: opts.ttlMs ?? 3_600_000 };
  const service = new PruneService(deps, options);
  // a second context over the same deps: what approval-params.ts is called with
  const ctx = pruneContext(deps, options);
  return { cluster, app, service, ctx, deps, ev };
}

export const noDenial = (): undefined => undefined;
