// Test support for the prune service's unit tests (imported only by the *.test.ts files beside it): an
// in-memory apiserver for ConfigMaps in namespace prod (GET, and DELETE with uid/resourceVersion preconditions),
// users, and a PruneService over it with a real SQLite evidence store in `dir`.
import { parseGrant } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import type { Obj } from '../../domain/object-meta.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import type { Principal } from '../auth/sessions.ts';
import type { RenderResult } from '../diff/render.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { KubeError, type ClusterConnection, type KubeResponse } from '../kube/connection.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import type { PreviewDoc, PruneServiceDeps } from './model.ts';
import { PruneService } from './service.ts';
import { PruneStore } from './store.ts';

const user = (name: string, ...grants: string[]): Principal => ({
  name,
  source: 'local',
  groups: [],
  grants: grants.map(parseGrant),
});
export const dev = user('dev', 'developer@prod/prod');
export const rev1 = user('rev1', 'reviewer@prod/prod');
export const rev2 = user('rev2', 'reviewer@prod/prod');
export const rev3 = user('rev3', 'reviewer@prod/prod');

/** A tiny apiserver for ConfigMaps in namespace prod: GET, and DELETE with uid/resourceVersion preconditions. */
class FakeCluster {
  objects = new Map<string, Obj>();
  deletes: Array<{ name: string; body: Obj }> = [];
  failDelete = new Set<string>();
  /** DELETEs that get no answer (a timeout) while the apiserver holds them, applied by applyLate() */
  hangDelete = new Set<string>();
  /** the apiserver continues before the next read: held DELETEs are applied first */
  continueOnRead = false;
  private late: Array<() => void> = [];
  private rv = 100;
  applyLate(): void {
    for (const f of this.late.splice(0)) f();
  }
  add(name: string, annotations: Record<string, string> = {}): void {
    this.objects.set(name, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'prod', uid: `uid-${name}`, resourceVersion: String(++this.rv), annotations },
    });
  }
  touch(name: string): void {
    const o = this.objects.get(name) as { metadata: { resourceVersion: string } };
    o.metadata.resourceVersion = String(++this.rv);
  }
  conn(): ClusterConnection {
    const answer = (status: number, body: unknown): KubeResponse => ({
      status,
      headers: {},
      body: JSON.stringify(body),
    });
    const c = {
      request: async (method: string, path: string, opts: { body?: string } = {}): Promise<KubeResponse> => {
        const m = /^\/api\/v1\/namespaces\/prod\/configmaps\/([^/?]+)$/.exec(path);
        if (!m) return answer(404, {});
        const name = decodeURIComponent(m[1] ?? '');
        const o = this.objects.get(name) as { metadata: { uid: string; resourceVersion: string } } | undefined;
        if (method === 'GET') {
          if (this.continueOnRead) this.applyLate();
          const now = this.objects.get(name);
          return now ? answer(200, now) : answer(404, {});
        }
        if (method === 'PATCH') {
          // a merge patch of metadata.annotations, with its resourceVersion as precondition (a fence)
          const body = JSON.parse(opts.body ?? '{}') as { metadata?: { resourceVersion?: string; annotations?: Obj } };
          if (!o) return answer(404, {});
          const want = body.metadata?.resourceVersion;
          if (want !== undefined && want !== o.metadata.resourceVersion) return answer(409, {});
          const ann = { ...(((o.metadata as Obj).annotations as Obj | undefined) ?? {}) };
          for (const [k, v] of Object.entries(body.metadata?.annotations ?? {}))
            if (v === null) delete ann[k];
            else ann[k] = v;
          Object.assign(o.metadata, { annotations: ann, resourceVersion: String(++this.rv) });
          return answer(200, o);
        }
        if (method === 'DELETE') {
          const body = JSON.parse(opts.body ?? '{}') as { preconditions?: { uid?: string; resourceVersion?: string } };
          this.deletes.push({ name, body });
          if (this.failDelete.has(name)) return answer(500, { message: 'boom' });
          if (this.hangDelete.delete(name)) {
            this.late.push(() => {
              const now = this.objects.get(name) as { metadata: { uid: string; resourceVersion: string } } | undefined;
              const p = body.preconditions ?? {};
              if (now && p.uid === now.metadata.uid && p.resourceVersion === now.metadata.resourceVersion)
                this.objects.delete(name);
            });
            throw new KubeError('request timed out after 15000 ms', 'prod', 0, 'ETIMEDOUT');
          }
          if (!o) return answer(404, {});
          const p = body.preconditions ?? {};
          if (p.uid !== o.metadata.uid || p.resourceVersion !== o.metadata.resourceVersion)
            return answer(409, { message: 'Precondition failed' });
          this.objects.delete(name);
          return answer(200, o);
        }
        return answer(405, {});
      },
      json: async (method: string, path: string, opts: { body?: string } = {}) => {
        if (path === '/api/v1') return { resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true }] };
        const r = await c.request(method, path.split('?')[0] ?? path, opts);
        if (r.status !== 200) throw new KubeError(`${method} ${path}: ${r.status}`, 'prod', r.status);
        return JSON.parse(r.body) as Obj;
      },
      httpError: (res: KubeResponse, what: string) => new KubeError(`${what}: ${res.status}`, 'prod', res.status),
    };
    return c as unknown as ClusterConnection;
  }
}

export const ref = (name: string): ObjectRef => ({
  cluster: 'prod',
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  namespace: 'prod',
  name,
});

export function setup(
  dir: string,
  opts: {
    inGit: string[];
    live: string[];
    render?: () => Promise<RenderResult>;
    batchSize?: number;
    settleMs?: number;
  },
) {
  const cluster = new FakeCluster();
  for (const n of opts.live) cluster.add(n);
  const ev = SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  const recorder = new EvidenceRecorder(ev, { warn() {}, error() {} });
  const app: App = {
    id: 'prod/flux-system/kustomization/app',
    cluster: 'prod',
    controller: 'flux',
    kind: 'Kustomization',
    namespace: 'flux-system',
    name: 'app',
    env: 'prod',
    source: { revisionWanted: 'main@sha1:1' },
    automation: { autoSync: true, selfHeal: true, prune: false, suspended: false },
    sync: 'Synced',
    health: 'Healthy',
    healthMessage: '',
    conditions: [],
    inventory: opts.live.map(ref),
    warnings: [],
  };
  const index = {
    watches: () => false,
    get: () => undefined,
    trackedBy: () => [],
    childrenOf: () => [],
  } as unknown as ObjectIndex;
  const deps: PruneServiceDeps = {
    // an unanswered DELETE is settled at once (no back-off between read-backs)
    settle: { deadlineMs: 2000, pause: async () => undefined },
    recorder,
    store: new PruneStore<PreviewDoc>(ev),
    index,
    app: () => app,
    conn: () => cluster.conn(),
    listed: () => true,
    render:
      opts.render ??
      (async () => ({
        objects: opts.inGit.map((n) => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: n, namespace: 'prod' },
        })),
        renderer: 'test',
        revision: 'main@sha1:1',
        renderHash: 'h',
      })),
  };
  const service = new PruneService(deps, {
    batchSize: opts.batchSize ?? 10,
    ...(opts.settleMs !== undefined ? { settleMs: opts.settleMs } : {}),
  });
  const denied: string[] = [];
  const onDenied = (reason: string) => denied.push(reason);
  return { cluster, app, service, deps, ev, denied, onDenied };
}
