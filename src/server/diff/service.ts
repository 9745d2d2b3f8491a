// Git versus live for one app, as one user may see it: wires the diff engine (app-diff.ts) to the cluster
// cache, discovery, the renderers and, in impersonation mode, the user's Kubernetes RBAC; records each new
// render as evidence (an observation: retried until written, never dropped). No Fastify types here.
//
// Live updates without a storm: an open diff is refetched on every live change of the app (a Pod's status
// included), so the work is cached by what it depends on. Renders by their inputs (render-cache.ts: the
// revision, not the live state), object results by desired object + live object apart from status +
// manager + identity + ignore rules (object-diff-memo.ts); a refetch redoes only the dry-runs of objects
// whose inputs changed. Concurrent identical requests (same app, same identity) share one computation.
import { argoTrackingSettings } from '../../domain/argo-tracking.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from '../../domain/app.ts';
import { splitApiVersion } from '../../domain/refs.ts';
import type { Principal } from '../auth/index.ts';
import type { AppCatalog } from '../apps/index.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { ClusterManager } from '../kube/cluster-manager.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { HttpError } from '../http/errors.ts';
import type { ManagedCluster } from '../kube/cluster-manager.ts';
import { Discovery } from '../kube/discovery.ts';
import { kindKey } from '../kube/kinds.ts';
import { connectionFor, managedCluster } from '../auth/index.ts';
import { AccessReviewer } from '../auth/index.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { controllerManagers, diffApp, type AppDiff, type DiffDeps } from './app-diff.ts';
import { renderInput } from './desired.ts';
import { helmChartOf } from '../gitops/flux.ts';
import { trackerOf } from '../tree/index.ts';
import { compareRenders, type EnvCompare } from './env-compare.ts';
import { ObjectDiffCache, type ObjectDiffCacheOptions, type ObjectDiffCacheStats } from './object-diff-memo.ts';
import { RenderCache, type RenderCacheOptions, type RenderCacheStats } from './render-cache.ts';
import type { Obj, RenderResult, RenderTools } from './render.ts';
import { maskSecrets } from '../kube/secret-mask.ts';

/** The renderers: explicit env, else the sandbox-built binaries, else PATH. */
export function renderTools(dataDir: string, repoRoot = process.cwd()): RenderTools {
  const local = (n: string) => (existsSync(join(repoRoot, '.sandbox/bin', n)) ? join(repoRoot, '.sandbox/bin', n) : n);
  return {
    fluxRender: process.env.CONSOLE_FLUX_RENDER ?? local('flux-render'),
    // Flux renders through running `flux-render --serve` processes (render-server.ts) unless
    // CONSOLE_FLUX_RENDER_SERVER=off (docs/develop/testing.md, "Renders")
    fluxRenderServer: process.env.CONSOLE_FLUX_RENDER_SERVER !== 'off',
    kustomize: process.env.CONSOLE_KUSTOMIZE ?? local('kustomize'),
    helm: process.env.CONSOLE_HELM ?? local('helm'),
    jqDel: process.env.CONSOLE_JQ_DEL ?? local('jq-del'),
    workDir: join(dataDir, 'render-cache'),
  };
}

interface ServiceDeps {
  clusters: ClusterManager;
  catalog: AppCatalog;
  index?: ObjectIndex | undefined;
  reviewer?: AccessReviewer | undefined;
  recorder: EvidenceRecorder;
  dataDir?: string | undefined;
  /** AppDeps' CONSOLE_DIFF_PROOF setting; the options' `applyNoop` wins */
  diffApplyNoop?: boolean | undefined;
}

/** What one diff cost (the response's `work`). */
export interface DiffWork {
  renders: number;
  dryRuns: number;
  cachedObjects: number;
  coalesced: boolean;
}

export type DiffResult = AppDiff & { work: DiffWork };

export interface DiffServiceStats {
  /** diffs computed (coalesced requests not counted) */
  diffs: number;
  /** requests that shared a concurrent identical diff */
  coalesced: number;
  /** renders run, by diffs and environment comparisons */
  renders: number;
  /** server-side dry-runs sent */
  dryRuns: number;
  /** object results reused from the memo */
  cachedObjects: number;
  renderCache: RenderCacheStats;
  objectCache: ObjectDiffCacheStats;
}

export interface DiffServiceOptions {
  renderCache?: RenderCacheOptions;
  objectCache?: ObjectDiffCacheOptions;
  /**
   * Skip the dry-run of an object whose apply provably changes nothing (domain/apply-noop.ts). Default on; the
   * release recorder's service turns it off: its validation state says the apiserver accepted each object now.
   */
  applyNoop?: boolean;
}

/** The dry-run request the engine sends (app-diff.ts): part of every object result's key. */
const DRY_RUN = 'PATCH apply dryRun=All force=true';

/** The same connection, counting the server-side dry-runs sent through it. */
function countingDryRuns(conn: ClusterConnection, count: () => void): ClusterConnection {
  const view = Object.create(conn) as ClusterConnection;
  view.request = (method, path, opts) => {
    if (method === 'PATCH' && /[?&]dryRun=All(&|$)/.test(path)) count();
    return conn.request.call(view, method, path, opts);
  };
  return view;
}

export class DiffService {
  private readonly discoveries = new Map<string, Discovery>();
  private readonly lastRender = new Map<string, string>();
  private readonly tools: RenderTools;
  private readonly renders: RenderCache;
  private readonly objects: ObjectDiffCache;
  private readonly inFlight = new Map<string, Promise<DiffResult>>();
  private readonly counts = { diffs: 0, coalesced: 0, renders: 0, dryRuns: 0, cachedObjects: 0 };

  private readonly applyNoop: boolean;

  constructor(
    private readonly deps: ServiceDeps,
    opts: DiffServiceOptions = {},
  ) {
    this.applyNoop = opts.applyNoop ?? deps.diffApplyNoop ?? true;
    this.tools = renderTools(deps.dataDir ?? '.data');
    this.renders = new RenderCache(opts.renderCache);
    this.objects = new ObjectDiffCache(opts.objectCache);
  }

  /** Counters since start: renders, dry-runs, reuse (for benchmarks and tests; also in each response's `work`). */
  stats(): DiffServiceStats {
    return { ...this.counts, renderCache: this.renders.stats(), objectCache: this.objects.stats() };
  }

  /**
   * Git versus live for one app; a new render hash is recorded as `app.rendered`. A request while the same
   * app's diff for the same identity is being computed waits for that one instead of starting another.
   */
  async diff(a: App, user: Principal | undefined): Promise<DiffResult> {
    const key = `${a.id}\n${this.identity(user)}`;
    const running = this.inFlight.get(key);
    if (running) {
      this.counts.coalesced++;
      const r = await running;
      return { ...r, work: { ...r.work, coalesced: true } };
    }
    const p = this.compute(a, user).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return p;
  }

  private async compute(a: App, user: Principal | undefined): Promise<DiffResult> {
    this.counts.diffs++;
    const work: DiffWork = { renders: 0, dryRuns: 0, cachedObjects: 0, coalesced: false };
    const memoCounts = { reused: 0, computed: 0 };
    const deps = await this.diffDeps(a, user, () => {
      work.dryRuns++;
      this.counts.dryRuns++;
    });
    deps.render = async () => {
      const { result, cached } = await this.render(a, deps);
      if (!cached) work.renders++;
      return result;
    };
    // only from a cache that is current: while the cluster is unreachable the proof would read a stale copy as
    // "no differences" (a dry-run fails and says so instead)
    deps.applyNoop = this.applyNoop && managedCluster(this.deps.clusters, a.cluster).state?.status === 'connected';
    deps.memo = this.objects.scope(
      {
        cluster: a.cluster,
        appId: a.id,
        controller: a.controller,
        manager: controllerManagers(a)[0] ?? '',
        identity: this.identity(user),
        dryRun: DRY_RUN,
        ignore:
          a.controller === 'argocd' ? ((deps.appObject.spec as Obj | undefined)?.ignoreDifferences ?? null) : null,
        jq: !!this.tools.jqDel,
      },
      memoCounts,
    );
    const result = await diffApp(a, deps);
    work.cachedObjects = memoCounts.reused;
    this.counts.cachedObjects += memoCounts.reused;
    if (result.render && this.lastRender.get(a.id) !== result.render.renderHash) {
      this.lastRender.set(a.id, result.render.renderHash);
      this.deps.recorder.observe({
        time: new Date().toISOString(),
        type: 'app.rendered',
        actor: 'console',
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        data: { ...result.render },
      });
    }
    return { ...result, work };
  }

  /**
   * The app's desired state as its controller renders it (the diff's renderer, through the render cache), as
   * this user may read it; throws when the render or the source fetch fails (prune previews: unknown).
   */
  async desired(a: App, user: Principal | undefined): Promise<RenderResult> {
    return (await this.render(a, await this.diffDeps(a, user))).result;
  }

  /** The app's render through the cache (a render runs only when its inputs changed). */
  private async render(a: App, deps: DiffDeps): Promise<{ result: RenderResult; cached: boolean }> {
    const r = await this.renders.render(renderInput(a, deps), this.tools);
    if (!r.cached) this.counts.renders++;
    return r;
  }

  /** Who requests to the cluster go out as: the impersonated user and groups, or the console itself. */
  private identity(user: Principal | undefined): string {
    return this.deps.reviewer && user ? JSON.stringify(AccessReviewer.headers(user)) : 'console';
  }

  /** The same app's renders across its environments (the family this user may see), compared field by field. */
  async environments(family: App[], user: Principal | undefined): Promise<EnvCompare> {
    const rendered = await Promise.all(
      family.map(async (m) => {
        const base = { env: m.env, appId: m.id, cluster: m.cluster };
        try {
          const { result: render } = await this.render(m, await this.diffDeps(m, user));
          // Secret values never leave the BFF: compare masks (equal values, equal masks)
          return { ...base, render: { ...render, objects: render.objects.map((o) => maskSecrets(o)) } };
        } catch (e) {
          return { ...base, error: e instanceof Error ? e.message : String(e) };
        }
      }),
    );
    const cmp = compareRenders(
      rendered.map((r) => ({ env: r.env, ...('render' in r && r.render ? { render: r.render } : {}) })),
    );
    return {
      envs: rendered.map((r) => ({
        env: r.env,
        appId: r.appId,
        cluster: r.cluster,
        ...('render' in r && r.render ? { revision: r.render.revision, renderHash: r.render.renderHash } : {}),
        ...('error' in r && r.error ? { error: r.error } : {}),
      })),
      ...cmp,
    };
  }

  private discovery(mc: ManagedCluster): Discovery {
    let d = this.discoveries.get(mc.name);
    if (!d) this.discoveries.set(mc.name, (d = new Discovery(mc.conn)));
    return d;
  }

  /** The diff engine's inputs for one app as one user sees it. */
  private async diffDeps(a: App, user: Principal | undefined, onDryRun?: () => void): Promise<DiffDeps> {
    const { catalog, reviewer } = this.deps;
    const index = this.deps.index;
    if (!index) throw new HttpError(400, 'BadRequest', 'no object index');
    const raw = catalog.rawObject(a.id);
    if (!raw) throw new HttpError(404, 'NotFound', `app ${a.id} is not in the console's cache`, a.cluster);
    const mc = managedCluster(this.deps.clusters, a.cluster);
    const d = this.discovery(mc);
    const srcKey = a.source.kind ? kindKey(a.source.kind) : undefined;
    const srcNs = String(
      ((raw.spec as Obj | undefined)?.sourceRef as { namespace?: string } | undefined)?.namespace ?? a.namespace,
    );
    // a HelmRelease renders from its chart's artifact (the HelmChart or chartRef source), not its HelmRepository
    const chart = a.kind === 'HelmRelease' ? helmChartOf(raw) : undefined;
    const chartKey = chart ? kindKey(chart.kind) : undefined;
    const source = chart
      ? chartKey
        ? mc.get(chartKey, chart.namespace, chart.name)
        : undefined
      : srcKey && a.source.name
        ? mc.get(srcKey, srcNs, a.source.name)
        : undefined;
    // impersonation: dry-runs and reads go out as the user, and what comes from the console's cache is
    // filtered by the user's Kubernetes RBAC too
    const userConn = connectionFor(mc, reviewer, user);
    const conn = onDryRun ? countingDryRuns(userConn, onDryRun) : userConn;
    const mayGet = async (apiVersion: string, kind: string, namespace: string | undefined): Promise<boolean> => {
      if (!reviewer || !user) return true;
      const { group, version } = splitApiVersion(apiVersion);
      return reviewer
        .allowed(user, { cluster: a.cluster, verb: 'get', group, version, kind, namespace })
        .catch(() => false);
    };
    let tracked = index.trackedBy(a.cluster, trackerOf(a));
    if (reviewer && user) {
      const visible: Obj[] = [];
      for (const o of tracked) {
        const ns = (o.metadata as { namespace?: string } | undefined)?.namespace;
        if (await mayGet(String(o.apiVersion ?? 'v1'), String(o.kind), ns)) visible.push(o);
      }
      tracked = visible;
    }
    const configMapsReadable = await mayGet('v1', 'ConfigMap', a.namespace);
    return {
      conn,
      discovery: d,
      tools: this.tools,
      appObject: raw,
      ...(source ? { sourceObject: source } : {}),
      configMap: (ns, name) =>
        configMapsReadable ? index.get(a.cluster, { group: '', kind: 'ConfigMap', namespace: ns, name }) : undefined,
      tracked: () => tracked,
      // Argo CD's tracking settings, from the argocd-cm in its namespace (absent: Argo CD's defaults, as it does)
      ...(a.controller === 'argocd'
        ? {
            argoTracking: argoTrackingSettings(
              index.get(a.cluster, { group: '', kind: 'ConfigMap', namespace: a.namespace, name: 'argocd-cm' })
                ?.data as Record<string, unknown> | undefined,
            ),
          }
        : {}),
      async getLive(ref) {
        const { group } = splitApiVersion(ref.apiVersion);
        if (!(await mayGet(ref.apiVersion, ref.kind, ref.namespace)))
          throw new Error(
            `Kubernetes RBAC does not let ${user?.name ?? 'this user'} get ${ref.kind} in ${ref.namespace ?? 'the cluster scope'}`,
          );
        if (index.watches(group, ref.kind))
          return index.get(a.cluster, {
            group,
            kind: ref.kind,
            ...(ref.namespace ? { namespace: ref.namespace } : {}),
            name: ref.name,
          });
        const path = await d.path(ref.apiVersion, ref.kind, ref.namespace, ref.name);
        if (group === '' && ref.kind === 'Secret') return liveSecretByDryRun(conn, path, ref);
        const res = await conn.request('GET', path, { timeoutMs: 10_000 });
        if (res.status === 404) return undefined;
        if (res.status !== 200) throw mc.conn.httpError(res, `GET ${ref.kind}`);
        return JSON.parse(res.body) as Obj;
      },
    };
  }
}

/**
 * A live Secret without `get` on Secrets (the console never holds it): a server-side dry-run apply of only
 * its identity, by a field manager that owns nothing, changes nothing and returns the live object. It needs
 * `patch` (which the diff's dry-run of Git's Secrets needs anyway: so `patch` on Secrets amounts to reading
 * them, and deploy/rbac.yaml says so); values are masked before they leave the BFF. A Secret that does not
 * exist would be created by the apply, which needs `create` the console does not hold: that 403 means absent.
 */
async function liveSecretByDryRun(
  conn: ClusterConnection,
  path: string,
  ref: { apiVersion: string; kind: string; namespace?: string; name: string },
): Promise<Obj | undefined> {
  const body = JSON.stringify({
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
  });
  const res = await conn.request('PATCH', `${path}?dryRun=All&fieldManager=gitops-console-read`, {
    body,
    contentType: 'application/apply-patch+yaml',
    timeoutMs: 10_000,
  });
  // 201: the dry-run would have created it, so it does not exist
  if (res.status === 404 || res.status === 201) return undefined;
  if (res.status === 403 && /\bcreate\b/.test(res.body)) return undefined;
  if (res.status !== 200) throw conn.httpError(res, `read Secret ${ref.name}`);
  return JSON.parse(res.body) as Obj;
}
