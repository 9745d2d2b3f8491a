// Every GitOps app across clusters, kept current from the informer caches.
// Emits app changes (for SSE) and records evidence: each app's observed
// revision change, each cluster's connection change, and each app whose environment is flagged (its label
// disagrees with the console's mapping, or the mapping does not decide it) when that is first seen.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { appId, worseHealth, type App } from '../../domain/app.ts';
import { dependencyStates, waitingOn } from '../../domain/flux-deps.ts';
import { pruneHold, pruneHoldLine } from '../../domain/prune-hold.ts';
import { refId } from '../../domain/refs.ts';
import { refOf } from '../../domain/tree.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import { appTree } from '../tree/index.ts';
import type { DriftTracker } from '../drift/index.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { applicationToApp } from '../gitops/argocd.ts';
import type { EnvSetting } from '../gitops/common.ts';
import { mappedEnv } from '../../domain/environments.ts';
import { helmChartOf, helmReleaseToApp, kustomizationToApp } from '../gitops/flux.ts';
import type { ClusterManager, ClusterState } from '../kube/cluster-manager.ts';
import type { InformerEvent, KubeObject } from '../kube/informer.ts';
import { KINDS, SOURCE_KINDS, kindKey } from '../kube/kinds.ts';
import type { EvidenceInput } from '../../domain/evidence.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';

export interface CatalogEvents {
  app: [{ type: 'upsert'; app: App } | { type: 'delete'; id: string }];
  /** live objects of the app changed (its tree should be refetched) */
  objects: [string];
  cluster: [ClusterState];
}

export interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

export class AppCatalog extends EventEmitter<CatalogEvents> {
  private readonly apps = new Map<string, App>();
  private lastRevision = new Map<string, string>();
  /** app id → the environment conflict last recorded for it (cleared when the app shows none) */
  private lastEnvConflict = new Map<string, string>();
  private index?: ObjectIndex;
  private drift?: DriftTracker;
  /** refId of a managed object → ids of apps whose inventory lists it */
  private readonly byObject = new Map<string, Set<string>>();
  /** app id → ids of the apps that depend on it (Flux dependsOn), so its Ready change updates their "waiting on" */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly raw = new Map<string, { cluster: string; kind: string; obj: KubeObject }>();
  private readonly dirty = new Set<string>();
  private flushTimer?: NodeJS.Timeout;

  constructor(
    private readonly clusters: ClusterManager,
    private readonly recorder: EvidenceRecorder,
    /** the env label's name, or it and the console's environment mapping (CONSOLE_ENVIRONMENTS) */
    private readonly envSetting: EnvSetting,
    private readonly log: Logger,
  ) {
    super();
    this.setMaxListeners(1000);
  }

  async start(): Promise<void> {
    this.lastRevision = await this.recorder.store.latestDataByApp('app.revision-observed', 'revision');
    this.lastEnvConflict = await this.recorder.store.latestDataByApp('app.env-conflict', 'conflict');
    this.clusters.on('object', (cluster, e) => this.onObject(cluster, e));
    this.clusters.on('state', (s) => this.onClusterState(s));
  }

  /** With an object index, app health becomes the worst of the controller's view and its managed objects. */
  attachIndex(index: ObjectIndex): void {
    this.index = index;
    index.on('changed', (cluster, obj) => {
      for (const o of index.ancestors(cluster, obj)) {
        const ids = this.byObject.get(refId(refOf(cluster, o)));
        if (ids) for (const id of ids) this.dirty.add(id);
      }
      if (this.dirty.size && !this.flushTimer) {
        this.flushTimer = setTimeout(() => this.flushDirty(), 250);
        this.flushTimer.unref();
      }
    });
  }

  /** With a drift tracker, each app carries its open drift episodes (updated as they open and end). */
  attachDrift(drift: DriftTracker): void {
    this.drift = drift;
    drift.on('changed', (id) => {
      this.dirty.add(id);
      // drift is shown "at once": flush on the next tick, not after the 250 ms health batch
      setImmediate(() => this.settleNow());
      if (!this.flushTimer) {
        this.flushTimer = setTimeout(() => this.flushDirty(), 250);
        this.flushTimer.unref();
      }
    });
  }

  /** Applies pending object-health updates now (readiness: "ready" must mean the apps reflect the synced caches). */
  settleNow(): void {
    if (!this.flushTimer) return;
    clearTimeout(this.flushTimer);
    this.flushDirty();
  }

  private flushDirty(): void {
    this.flushTimer = undefined;
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) {
      const r = this.raw.get(id);
      if (!r) continue;
      const app = this.toApp(r.cluster, r.kind, r.obj);
      if (app) this.upsert(app);
      this.emit('objects', id);
    }
  }

  /** the app's custom resource as last seen (Kustomization / HelmRelease / Application) */
  rawObject(id: string): KubeObject | undefined {
    return this.raw.get(id)?.obj;
  }

  /**
   * The environment the console's mapping gives a namespace of a cluster (for objects no app manages), or
   * undefined when no mapping is configured (then the namespace is the environment, as before) — `unknown` when
   * a mapping is configured but covers none.
   */
  envOfNamespace(cluster: string, namespace: string): string | undefined {
    const rules = typeof this.envSetting === 'string' ? undefined : this.envSetting.rules;
    if (!rules?.length) return undefined;
    return mappedEnv(rules, cluster, namespace) ?? 'unknown';
  }

  /** app upserts and deletes emitted so far by this catalog (this process) */
  private changes = 0;
  private readonly boot = randomBytes(6).toString('hex');
  /** `<boot>:<changes>`: what a list answer and a stream's hello carry (another replica's never compares equal) */
  version(): string {
    return `${this.boot}:${this.changes}`;
  }

  list(): App[] {
    return [...this.apps.values()];
  }

  /** the apps whose dependsOn names this one */
  dependentsOf(id: string): App[] {
    return [...(this.dependents.get(id) ?? [])].flatMap((d) => {
      const a = this.apps.get(d);
      return a?.dependsOn?.some((r) => appId(a.cluster, r.namespace, a.kind, r.name) === id) ? [a] : [];
    });
  }

  get(id: string): App | undefined {
    return this.apps.get(id);
  }

  /** observations: queued in order and retried until the store takes them */
  private record(ev: EvidenceInput): void {
    this.recorder.observe(ev);
  }

  /** waits for queued evidence writes (tests, shutdown) */
  async flush(): Promise<void> {
    await this.recorder.flush();
  }

  private onClusterState(s: ClusterState): void {
    this.emit('cluster', s);
    if (s.status === 'connected') {
      this.record({
        time: new Date().toISOString(),
        type: 'cluster.connected',
        actor: 'console',
        cluster: s.name,
        data: { server: s.server },
      });
    } else if (s.status === 'unreachable') {
      this.record({
        time: new Date().toISOString(),
        type: 'cluster.lost',
        actor: 'console',
        cluster: s.name,
        data: { reason: s.reason ?? '', staleSince: s.staleSince ?? s.since },
      });
    }
  }

  private toApp(cluster: string, kind: string, obj: KubeObject): App | undefined {
    const mc = this.clusters.clusters.get(cluster);
    if (!mc) return undefined;
    const lookup = (k: string, ns: string, name: string) => {
      const key = kindKey(k);
      return key ? mc.get(key, ns, name) : undefined;
    };
    try {
      const app =
        kind === 'Kustomization'
          ? kustomizationToApp(cluster, obj, lookup, this.envSetting)
          : kind === 'HelmRelease'
            ? helmReleaseToApp(cluster, obj, lookup, this.envSetting)
            : kind === 'Application'
              ? applicationToApp(cluster, obj, this.envSetting)
              : undefined;
      const links = app ? linksOf(obj) : [];
      return app && links.length ? { ...app, links } : app;
    } catch (e) {
      this.log.warn({ cluster, kind, name: obj.metadata?.name, err: String(e) }, 'cannot read app object');
    }
    return undefined;
  }

  private withObjectHealth(app: App): App {
    if (!this.index || app.inventory.length === 0) return app;
    const { summary } = appTree(app, this.index);
    const worst = worseHealth(app.health, summary.health);
    if (worst === app.health) return app;
    return { ...app, health: worst, healthMessage: summary.reason };
  }

  /** "waiting on infra-dev (not Ready: …)" from the app's Ready and its dependencies' own (domain/flux-deps.ts) */
  private withWaiting(app: App): App {
    if (!app.dependsOn?.length) return app;
    for (const d of app.dependsOn) {
      const id = appId(app.cluster, d.namespace, app.kind, d.name);
      let set = this.dependents.get(id);
      if (!set) this.dependents.set(id, (set = new Set()));
      set.add(app.id);
    }
    // (reasons only: the line is shown wherever the app is, to people who may not read the dependency)
    const line = waitingOn(
      app,
      dependencyStates(app, app.dependsOn, (id) => this.apps.get(id)),
      { messages: false },
    );
    if (!line) return app;
    // the health line says the same as the waiting line, never Flux's older "dependency … is not ready"
    return app.healthMessage.startsWith('waiting on a dependency')
      ? { ...app, waitingOn: line, healthMessage: line }
      : { ...app, waitingOn: line };
  }

  /**
   * "held by the prune policy" (domain/prune-hold.ts): its own status, and the health line says it (never
   * "Progressing — waiting for the controller" or Flux's raw PruneFailed text) unless an object is worse (then
   * withObjectHealth names that object).
   */
  private withPruneHold(app: App): App {
    const hold = pruneHold(app);
    return hold ? { ...app, pruneHold: hold, healthMessage: pruneHoldLine(hold) } : app;
  }

  /** The apps that depend on this one, read again (their "waiting on" line names its Ready). */
  private refreshDependents(id: string): void {
    for (const dep of this.dependents.get(id) ?? []) {
      const r = this.raw.get(dep);
      const app = r ? this.toApp(r.cluster, r.kind, r.obj) : undefined;
      if (app) this.upsert(app);
    }
  }

  private upsert(input: App): void {
    const withHealth = this.withWaiting(this.withObjectHealth(this.withPruneHold(input)));
    const drift = this.drift?.forApp(withHealth.id);
    const app = drift ? { ...withHealth, drift } : withHealth;
    const prev = this.apps.get(app.id);
    if (prev) for (const r of prev.inventory) this.byObject.get(refId(r))?.delete(app.id);
    for (const r of app.inventory) {
      const k = refId(r);
      let set = this.byObject.get(k);
      if (!set) this.byObject.set(k, (set = new Set()));
      set.add(app.id);
    }
    app.updatedAt = new Date().toISOString();
    if (prev && JSON.stringify({ ...prev, updatedAt: '' }) === JSON.stringify({ ...app, updatedAt: '' })) return;
    this.apps.set(app.id, app);
    this.changes++;
    this.emit('app', { type: 'upsert', app });
    // the apps that depend on it show its Ready in their "waiting on" line: read again only when that changed (not
    // on every health update of its objects: each would rebuild every dependent's tree)
    const ready = (a: App | undefined) => JSON.stringify(a?.conditions.find((c) => c.type === 'Ready') ?? null);
    if (!prev || ready(prev) !== ready(app)) this.refreshDependents(app.id);
    this.recordEnvConflict(app);
    const rev = app.source.revisionObserved;
    if (rev && this.lastRevision.get(app.id) !== rev) {
      const previous = this.lastRevision.get(app.id);
      this.lastRevision.set(app.id, rev);
      this.record({
        time: new Date().toISOString(),
        type: 'app.revision-observed',
        actor:
          app.controller !== 'flux'
            ? 'argocd-application-controller'
            : app.kind === 'HelmRelease'
              ? 'helm-controller'
              : 'kustomize-controller',
        app: app.id,
        cluster: app.cluster,
        env: app.env,
        data: {
          revision: rev,
          previous: previous ?? null,
          artifactDigest: app.source.artifactDigest ?? null,
          sourceUrl: withoutUserInfo(app.source.url) ?? null,
          simulated: app.simulated ? true : undefined,
        },
      });
    }
  }

  /** One observation per app when its environment is first flagged (again after it was clear in between). */
  private recordEnvConflict(app: App): void {
    if (!app.envConflict) {
      this.lastEnvConflict.delete(app.id);
      return;
    }
    if (this.lastEnvConflict.get(app.id) === app.envConflict) return;
    this.lastEnvConflict.set(app.id, app.envConflict);
    const labelName = typeof this.envSetting === 'string' ? this.envSetting : this.envSetting.label;
    const labels = (this.raw.get(app.id)?.obj.metadata as { labels?: Record<string, unknown> } | undefined)?.labels;
    const label = labels?.[labelName];
    this.record({
      time: new Date().toISOString(),
      type: 'app.env-conflict',
      actor: 'console',
      app: app.id,
      cluster: app.cluster,
      // the environment the console decided (what every permission check uses), not the label's
      env: app.env,
      data: {
        conflict: app.envConflict,
        envSource: app.envSource ?? null,
        label: typeof label === 'string' ? { name: labelName, value: label } : null,
      },
    });
  }

  private onObject(cluster: string, e: InformerEvent): void {
    const kind = e.kind.kind;
    if (kind === 'Kustomization' || kind === 'HelmRelease' || kind === 'Application') {
      const ns = e.obj.metadata?.namespace ?? '';
      const name = e.obj.metadata?.name ?? '';
      const id = `${cluster}/${ns}/${kind.toLowerCase()}/${name}`;
      if (e.type === 'delete') {
        this.raw.delete(id);
        const prev = this.apps.get(id);
        if (prev) for (const r of prev.inventory) this.byObject.get(refId(r))?.delete(id);
        if (this.apps.delete(id)) {
          this.changes++;
          this.emit('app', { type: 'delete', id });
        }
        this.refreshDependents(id);
        return;
      }
      this.raw.set(id, { cluster, kind, obj: e.obj });
      const app = this.toApp(cluster, kind, e.obj);
      if (app) this.upsert(app);
      return;
    }
    if (SOURCE_KINDS.has(kind)) {
      // a source changed: recompute the Flux apps that reference it
      const mc = this.clusters.clusters.get(cluster);
      if (!mc) return;
      for (const k of [KINDS.Kustomization, KINDS.HelmRelease]) {
        for (const obj of mc.list(k)) {
          const app = this.toApp(cluster, k.kind, obj);
          const chart = k.kind === 'HelmRelease' ? helmChartOf(obj) : undefined;
          const named = e.obj.metadata?.name;
          if (
            app &&
            ((app.source.kind === kind && app.source.name === named) ||
              (chart?.kind === kind && chart.name === named && chart.namespace === e.obj.metadata?.namespace))
          )
            this.upsert(app);
        }
      }
    }
  }
}

const LINK_PREFIX = 'link.argocd.argoproj.io/';

/**
 * Links from the app object's annotations (Argo CD's `link.argocd.argoproj.io/<title>: <url>` convention,
 * honoured for Flux objects too). Kept as written: the SPA renders only http(s) URLs as links.
 */
export function linksOf(obj: KubeObject): Array<{ title: string; url: string }> {
  const ann = (obj.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations ?? {};
  return Object.entries(ann)
    .filter((e): e is [string, string] => e[0].startsWith(LINK_PREFIX) && typeof e[1] === 'string')
    .map(([k, v]) => ({ title: k.slice(LINK_PREFIX.length).slice(0, 100), url: v.slice(0, 2048) }))
    .slice(0, 20);
}
