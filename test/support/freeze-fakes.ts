// The one set of fakes for the freeze service's unit tests (src/server/freeze/*.test.ts): one in-memory apiserver
// for Flux Kustomizations, shared by several "replicas" (FreezeService instances on one database), that records
// every patch with the time, the replica that sent it and whether it left the app suspended, and refuses a patch
// of a chosen object on demand; an app; a diff showing one live change (or none); and a replica wired like
// routes.ts does, whose informer copy of each app object is the fake apiserver's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { App } from '../../src/domain/app.ts';
import type { FieldChange } from '../../src/domain/field-diff.ts';
import { EvidenceRecorder } from '../../src/server/evidence/recorder.ts';
import { SqliteEvidenceStore } from '../../src/server/evidence/sqlite-store.ts';
import type { EvidenceStore } from '../../src/server/evidence/store.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { KubeError, type ClusterConnection } from '../../src/server/kube/connection.ts';
import { FreezeService, type FreezeActor, type FreezeServiceDeps } from '../../src/server/freeze/service.ts';
import { FreezeStore } from '../../src/server/freeze/store.ts';
import type { ClaimTiming } from '../../src/server/freeze/types.ts';
import type { SettleOpts } from '../../src/server/freeze/uncertain.ts';

type Obj = Record<string, unknown>;

/** a claim of 1 s renewed every 150 ms, ends watched every 100 ms (the console's: 30 s, 5 s, 5 s) */
export const TEST_TIMING: ClaimTiming = { ttlMs: 1000, renewMs: 150, watchMs: 100 };

export const quietLog = { warn() {}, error() {} };

export interface Patch {
  at: number;
  name: string;
  by: string;
  /** spec.suspend after the patch: false = the automation is back */
  suspendedAfter: boolean;
}

interface JsonOp {
  op: string;
  path: string;
  value?: unknown;
}

/**
 * Kustomizations in flux-system (and, for Argo CD cases, Applications): GET, merge PATCH honouring a resourceVersion
 * precondition, and JSON Patch.
 */
export class FakeFlux {
  objects = new Map<string, Obj>();
  patches: Patch[] = [];
  /** objects whose PATCH the apiserver refuses, with the status it answers */
  refuse = new Map<string, number>();
  /**
   * objects whose next PATCH goes unanswered (the client times out: KubeError status 0) while the apiserver keeps
   * it and applies it when `applyLate()` is called, as a stopped apiserver does once it continues
   */
  hang = new Set<string>();
  /** GETs that fail as network errors before the apiserver answers again (a count, for every object) */
  unreachableReads = 0;
  /** objects whose PATCH meets a refused connection (nothing sent) */
  refuseConnection = new Set<string>();
  /** GETs answered (or failed) so far */
  reads = 0;
  /** what `unreachableReads` becomes when a held PATCH times out (the apiserver still stopped) */
  readsFailingAfterHang = 0;
  /** Argo Rollouts (namespace `prod`) by name: GET and merge PATCH, a resourceVersion precondition honoured */
  rollouts = new Map<string, Obj>();
  /** Rollouts whose next PATCH goes unanswered while the apiserver keeps it (applied by `applyLate()`) */
  hangRollout = new Set<string>();
  /** reads of Rollouts that fail as network errors (a count) */
  unreachableRolloutReads = 0;
  /** what `unreachableRolloutReads` becomes when a held Rollout PATCH times out (the apiserver still stopped) */
  rolloutReadsFailingAfterHang = 0;
  /** an Argo CD CRD that does not know `automated.enabled`: the apiserver prunes it from every write */
  pruneArgoEnabled = false;
  private late: Array<() => void> = [];
  private rv = 1;

  addRollout(name: string, paused?: boolean): void {
    this.rollouts.set(name, {
      metadata: { name, namespace: 'prod', resourceVersion: String(++this.rv), annotations: {} },
      spec: paused === undefined ? {} : { paused },
    });
  }

  rolloutPaused(name: string): unknown {
    return ((this.rollouts.get(name) as Obj).spec as Obj).paused;
  }

  /** A Rollout's GET or merge PATCH: the status and the object, as the apiserver answers them. */
  private rolloutCall(method: string, path: string, body: string | undefined): { status: number; obj?: Obj } {
    const name = decodeURIComponent(/rollouts\/([^/?]+)/.exec(path)?.[1] ?? '');
    const o = this.rollouts.get(name);
    if (method === 'GET' && this.unreachableRolloutReads > 0) {
      this.unreachableRolloutReads--;
      throw new KubeError('unreachable: ECONNREFUSED', 'c', 0, 'ECONNREFUSED');
    }
    if (!o) return { status: 404 };
    if (method === 'GET') return { status: 200, obj: structuredClone(o) };
    const patch = JSON.parse(body ?? '{}') as Obj;
    const apply = (): { status: number; obj?: Obj } => {
      const cur = this.rollouts.get(name) as Obj;
      const want = (patch.metadata as Obj | undefined)?.resourceVersion;
      if (want !== undefined && want !== (cur.metadata as Obj).resourceVersion) return { status: 409 };
      const next = structuredClone(cur);
      for (const [k, v] of Object.entries((patch.spec as Obj | undefined) ?? {}))
        if (v === null) delete (next.spec as Obj)[k];
        else (next.spec as Obj)[k] = v;
      const anns = ((patch.metadata as Obj | undefined)?.annotations ?? {}) as Obj;
      const mine = (next.metadata as Obj).annotations as Obj;
      for (const [k, v] of Object.entries(anns))
        if (v === null) delete mine[k];
        else mine[k] = v;
      (next.metadata as Obj).resourceVersion = String(++this.rv);
      this.rollouts.set(name, next);
      return { status: 200, obj: structuredClone(next) };
    };
    if (this.hangRollout.delete(name)) {
      this.late.push(() => void apply());
      this.unreachableRolloutReads = this.rolloutReadsFailingAfterHang;
      throw new KubeError('request timed out after 10000 ms', 'c', 0, 'ETIMEDOUT');
    }
    return apply();
  }

  add(name: string, spec: Obj = {}): void {
    this.objects.set(name, {
      metadata: { name, namespace: 'flux-system', resourceVersion: String(++this.rv), annotations: {} },
      spec: { interval: '5m', ...spec },
    });
  }

  /** a controller's status write: a new resourceVersion, nothing else */
  statusWrite(name: string): void {
    ((this.objects.get(name) as Obj).metadata as Obj).resourceVersion = String(++this.rv);
  }

  /** kustomize-controller's reconcile of the object as it is now: `status.lastHandledReconcileAt` echoes the request */
  handleReconcile(name: string): void {
    const o = this.objects.get(name) as Obj;
    const req = ((o.metadata as Obj).annotations as Obj | undefined)?.['reconcile.fluxcd.io/requestedAt'];
    if (typeof req === 'string') o.status = { ...(o.status as Obj | undefined), lastHandledReconcileAt: req };
    this.statusWrite(name);
  }

  suspended(name: string): boolean {
    return ((this.objects.get(name) as Obj).spec as Obj).suspend === true;
  }

  annotations(name: string): Obj {
    return ((this.objects.get(name) as Obj).metadata as Obj).annotations as Obj;
  }

  /** the patches that gave the automation back */
  restores(): Patch[] {
    return this.patches.filter((p) => !p.suspendedAfter);
  }

  /** the connection of replica `by` (its patches are recorded under that name) */
  conn(by = 'console'): ClusterConnection {
    const httpError = (status: number, what: string) => new KubeError(`${what}: ${status}`, 'c', status);
    return {
      request: async (method: string, path: string, opts: { body?: string } = {}) => {
        const r = this.rolloutCall(method, path, opts.body);
        return { status: r.status, headers: {}, body: r.obj ? JSON.stringify(r.obj) : '{}' };
      },
      httpError: (res: { status: number }, what: string) => httpError(res.status, what),
      json: async (method: string, path: string, opts: { body?: string } = {}) => {
        if (path.includes('/rollouts/')) {
          const r = this.rolloutCall(method, path, opts.body);
          if (!r.obj) throw httpError(r.status, `${method} ${path}`);
          return r.obj;
        }
        const name = decodeURIComponent(/(?:kustomizations|applications)\/([^/?]+)/.exec(path)?.[1] ?? '');
        const o = this.objects.get(name);
        if (!o) throw new KubeError('not found', 'c', 404);
        if (method === 'GET') {
          this.reads++;
          if (this.unreachableReads > 0) {
            this.unreachableReads--;
            throw new KubeError('unreachable: ECONNREFUSED', 'c', 0, 'ECONNREFUSED');
          }
          return structuredClone(o);
        }
        const status = this.refuse.get(name);
        if (status) throw new KubeError(`refused ${status}`, 'c', status);
        const body = JSON.parse(opts.body ?? '{}') as Obj;
        if (this.refuseConnection.has(name))
          throw new KubeError(
            'https://127.0.0.1:1 unreachable: ECONNREFUSED connect ECONNREFUSED',
            'c',
            0,
            'ECONNREFUSED',
          );
        if (this.hang.delete(name)) {
          // applied later, with its precondition checked then (a stale resourceVersion: refused, as the apiserver does)
          this.late.push(() => {
            try {
              this.apply(name, body, by);
            } catch {
              /* a 409 nobody hears */
            }
          });
          this.unreachableReads = this.readsFailingAfterHang;
          throw new KubeError('request timed out after 10000 ms', 'c', 0, 'ETIMEDOUT');
        }
        return this.apply(name, body, by);
      },
    } as unknown as ClusterConnection;
  }

  /** the PATCHes the apiserver held, applied now */
  applyLate(): void {
    for (const f of this.late.splice(0)) f();
  }

  /** A JSON Patch (test, add, replace, remove; keys unescaped per RFC 6901), as Argo CD's restore sends it. */
  private applyJsonPatch(name: string, ops: JsonOp[], by: string): Obj {
    const next = structuredClone(this.objects.get(name) as Obj);
    for (const op of ops) {
      const keys = op.path
        .split('/')
        .slice(1)
        .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
      const last = keys.pop() as string;
      const parent = keys.reduce<Obj>((x, k) => (x[k] ??= {}) as Obj, next);
      if (op.op === 'test' && JSON.stringify(parent[last]) !== JSON.stringify(op.value))
        throw new KubeError('test failed', 'c', 422);
      if (op.op === 'add' || op.op === 'replace') parent[last] = structuredClone(op.value);
      if (op.op === 'remove') delete parent[last];
    }
    (next.metadata as Obj).resourceVersion = String(++this.rv);
    this.objects.set(name, next);
    this.patches.push({ at: Date.now(), name, by, suspendedAfter: (next.spec as Obj).suspend === true });
    return structuredClone(next);
  }

  private apply(name: string, body: Obj, by: string): Obj {
    const merge = (a: Obj, b: Obj): Obj => {
      const out: Obj = { ...a };
      for (const [k, v] of Object.entries(b)) {
        if (v === null) delete out[k];
        else if (v && typeof v === 'object' && !Array.isArray(v))
          out[k] = merge((a[k] as Obj | undefined) ?? {}, v as Obj);
        else out[k] = v;
      }
      return out;
    };
    const o = this.objects.get(name) as Obj;
    if (Array.isArray(body)) return this.applyJsonPatch(name, body as JsonOp[], by);
    const want = (body.metadata as Obj | undefined)?.resourceVersion;
    if (want !== undefined && want !== (o.metadata as Obj).resourceVersion) throw new KubeError('conflict', 'c', 409);
    const meta = { ...(body.metadata as Obj | undefined) };
    delete meta.resourceVersion;
    const next = merge(o, { ...body, metadata: meta });
    const automated = ((next.spec as Obj).syncPolicy as Obj | undefined)?.automated as Obj | undefined;
    if (this.pruneArgoEnabled && automated) delete automated.enabled;
    (next.metadata as Obj).resourceVersion = String(++this.rv);
    this.objects.set(name, next);
    this.patches.push({ at: Date.now(), name, by, suspendedAfter: (next.spec as Obj).suspend === true });
    return structuredClone(next);
  }
}

export const appOf = (name: string, source: App['source'] = {}, env = 'prod'): App => ({
  id: `c/flux-system/kustomization/${name}`,
  cluster: 'c',
  controller: 'flux',
  kind: 'Kustomization',
  namespace: 'flux-system',
  name,
  env,
  source,
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
  sync: 'Synced',
  health: 'Healthy',
  healthMessage: '',
  conditions: [],
  inventory: [],
  warnings: [],
});

export const oncall: FreezeActor = { name: 'oncall', may: () => true };

/** No live change on the app. */
export const noLiveChanges: FreezeServiceDeps['diff'] = async () => ({ state: 'ok', objects: [] });

/** One live change on the app: Deployment prod/api spec.replicas 2 → 5, by kubectl-edit, made just now. */
export const oneLiveChange: FreezeServiceDeps['diff'] = async () => ({
  state: 'ok',
  objects: [
    {
      ref: { cluster: 'c', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'prod', name: 'api' },
      changes: [
        {
          path: 'spec.replicas',
          desired: 2,
          live: 5,
          class: 'drift',
          owners: [{ manager: 'kubectl-edit', operation: 'Update', time: new Date(Date.now() + 1000).toISOString() }],
        } satisfies FieldChange,
      ],
    },
  ],
});

export const LIVE_CHANGE_ID = 'c/apps/Deployment/prod/api#spec.replicas';

/**
 * A replica: its own connection to the database, recorder and service, its apps' objects as the fake apiserver
 * holds them (an informer's copy); `looks` counts its looks at the ends.
 */
export function replicaOf(opts: {
  name: string;
  ev: EvidenceStore;
  flux: FakeFlux;
  apps: App[];
  /** this replica's clock, ahead of the real one by this much */
  aheadMs?: number;
  writeBack?: FreezeServiceDeps['writeBack'];
  /** the apps' field diff (default: one live change) */
  diff?: FreezeServiceDeps['diff'];
  timing?: ClaimTiming;
  /** CONSOLE_FREEZE_MIN_SECONDS: freezes may be asked for in seconds, down to this many */
  minSeconds?: number;
  /** the informers' copy of the app objects, when it is not the fake apiserver's (a cache that lags) */
  cache?: Map<string, Obj>;
  /** how a patch without an answer is settled (uncertain.ts): its pauses and deadline */
  settle?: SettleOpts;
}) {
  const recorder = new EvidenceRecorder(opts.ev, quietLog);
  const store = new FreezeStore(opts.ev);
  const counter = { looks: 0 };
  const list = store.list.bind(store);
  store.list = (o) => {
    counter.looks++;
    return list(o);
  };
  const apps = new Map(opts.apps.map((a) => [a.id, a]));
  const service = new FreezeService({
    recorder,
    store,
    apps: {
      get: (id) => apps.get(id),
      list: () => [...apps.values()],
      raw: (id) => {
        const o = (opts.cache ?? opts.flux.objects).get(apps.get(id)?.name ?? '');
        return o ? structuredClone(o) : undefined;
      },
    },
    conn: () => opts.flux.conn(opts.name),
    diff: opts.diff ?? oneLiveChange,
    ...(opts.writeBack ? { writeBack: opts.writeBack } : {}),
    now: () => Date.now() + (opts.aheadMs ?? 0),
    timing: opts.timing ?? TEST_TIMING,
    replica: opts.name,
    log: quietLog,
    minSeconds: opts.minSeconds,
    ...(opts.settle ? { settle: opts.settle } : {}),
  });
  return { service, store, recorder, counter };
}

export async function waitUntil(what: string, pred: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * One replica over a FakeFlux holding `names`, on its own SQLite store in `dir`, with no live changes; the store and
 * the service go into `track` for the test file's afterAll. `events(type)`: that type's records, in chain order.
 */
export function soloReplica(
  dir: string,
  names: string[],
  track: { opened: EvidenceStore[]; services: FreezeService[] },
  extra: {
    settle?: (flux: FakeFlux) => SettleOpts;
    minSeconds?: number;
    /** the objects each app manages (by app name): a Rollout in it is paused by the freeze */
    inventory?: Record<string, App['inventory']>;
    /** the app of each name (default: appOf, a Flux Kustomization) */
    appOf?: (name: string) => App;
  } = {},
) {
  const flux = new FakeFlux();
  for (const n of names) flux.add(n);
  const ev = SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  track.opened.push(ev);
  const { service, store, recorder } = replicaOf({
    name: 'console',
    ev,
    flux,
    apps: names.map((n) => ({ ...(extra.appOf ?? appOf)(n), inventory: extra.inventory?.[n] ?? [] })),
    diff: noLiveChanges,
    ...(extra.settle ? { settle: extra.settle(flux) } : {}),
    ...(extra.minSeconds !== undefined ? { minSeconds: extra.minSeconds } : {}),
  });
  track.services.push(service);
  const events = async (type: string): Promise<EvidenceEvent[]> =>
    (await ev.list({ limit: 1000 })).filter((e) => e.type === type).sort((x, y) => x.seq - y.seq);
  return { flux, service, store, events, ev, recorder };
}

/**
 * A test file's temporary directory and what its replicas open there (for soloReplica's `track`), all closed and
 * removed after the file's tests.
 */
export function freezeTestDir(prefix: string): {
  dir: string;
  track: { opened: EvidenceStore[]; services: FreezeService[] };
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const track = { opened: [] as EvidenceStore[], services: [] as FreezeService[] };
  afterAll(async () => {
    for (const s of track.services) await s.settled();
    for (const e of track.opened) await e.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, track };
}
