import type { FastifyPluginAsync } from 'fastify';
import { latestAnalysis, rolloutView, type RolloutView } from '../../domain/rollout.ts';
import { FLAGGER_GROUP, flaggerCanaryView, type FlaggerCanaryView } from '../../domain/flagger.ts';
import {
  AppResponse,
  AppsQuery,
  AppsResponse,
  DependencyGraphQuery,
  DependencyGraphResponse,
  type AppSummary,
  type ArgoSyncDto,
} from '../../api/schemas.ts';
import { dependenciesOf, environmentGraph } from './dependency-view.ts';
import { imageAutomationFor } from './image-automation.ts';
import { syncWindowsReader, type SyncWindowsReader } from './sync-windows.ts';
import { argoSyncOperationOf, argoSyncSteps, argoSyncWhy, syncWaveOf } from '../../domain/argo-sync.ts';
import { assessHealth } from '../../domain/health.ts';
import { appId, type App } from '../../domain/app.ts';
import { withoutSourceCredentials } from '../../domain/url-credentials.ts';
import { compareApps, overviewHead, searchTextOf } from '../../domain/overview.ts';
import { parsed, validated } from '../http/respond.ts';
import { appOf } from './app-of.ts';
import type { AppDeps } from '../deps.ts';
import { allowed } from '../auth/index.ts';

/**
 * An Argo CD app's last (or running) sync operation: its steps with each object's sync wave (from the live object
 * the console watches) and the one-sentence answer to "why is this not synced yet?" (with the object's health).
 */
function argoSyncView(a: App, deps: AppDeps): ArgoSyncDto | undefined {
  const raw = deps.catalog.rawObject(a.id);
  if (!raw) return undefined;
  const live = (t: { group: string; kind: string; namespace?: string; name: string }) =>
    deps.index?.get(a.cluster, {
      group: t.group,
      kind: t.kind,
      ...(t.namespace ? { namespace: t.namespace } : {}),
      name: t.name,
    });
  const op = argoSyncOperationOf(raw as Record<string, unknown>, (t) => {
    const o = live(t);
    return o ? syncWaveOf(o as Record<string, unknown>) : undefined;
  });
  if (!op) return undefined;
  const why = argoSyncWhy(op, (t) => {
    const o = live({ ...t, ...(t.namespace ? { namespace: t.namespace } : {}) });
    return o ? assessHealth(o) : undefined;
  });
  const { tasks: _tasks, ...rest } = op;
  return { ...rest, ...(why ? { why } : {}), steps: argoSyncSteps(op) };
}

/** The Argo Rollouts Rollouts the app manages, live from the index (domain/rollout.ts). */
/** The Flagger Canaries the app manages, as the console's informers see them. */
function flaggerCanariesOf(a: App, deps: AppDeps): FlaggerCanaryView[] {
  const out: FlaggerCanaryView[] = [];
  for (const r of a.inventory) {
    if (r.group !== FLAGGER_GROUP || r.kind !== 'Canary') continue;
    const o = deps.index?.get(a.cluster, {
      group: r.group,
      kind: r.kind,
      ...(r.namespace ? { namespace: r.namespace } : {}),
      name: r.name,
    });
    if (o) out.push(flaggerCanaryView(o as Record<string, unknown>));
  }
  return out;
}

function rolloutsOf(a: App, deps: AppDeps): RolloutView[] {
  const out: RolloutView[] = [];
  for (const r of a.inventory) {
    if (r.group !== 'argoproj.io' || r.kind !== 'Rollout') continue;
    const o = deps.index?.get(a.cluster, {
      group: r.group,
      kind: r.kind,
      ...(r.namespace ? { namespace: r.namespace } : {}),
      name: r.name,
    });
    if (!o) continue;
    const view = rolloutView(o as Record<string, unknown>);
    // the current step's analysis, or (after it ended: an abort clears it from the Rollout) the newest one
    if (!view.analysis) {
      const uid = (o.metadata as { uid?: string } | undefined)?.uid;
      // its children are its ReplicaSets and its AnalysisRuns (list items carry no kind: an AnalysisRun has spec.metrics)
      const runs = uid
        ? (deps.index?.childrenOf(a.cluster, uid) ?? []).filter(
            (c) =>
              Array.isArray((c as { spec?: { metrics?: unknown } }).spec?.metrics) &&
              // of this canary only (an earlier canary's run says nothing of this one)
              (c.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[
                'rollouts-pod-template-hash'
              ] === view.canaryHash,
          )
        : [];
      view.analysis = latestAnalysis(runs as Array<Record<string, unknown>>);
    }
    out.push(view);
  }
  return out;
}

/** An app as the list and the stream send it: its inventory counted, its repository URL without credentials. */
export function summarize(a: App, windows?: SyncWindowsReader): AppSummary {
  const { inventory, ...rest } = withoutSourceCredentials(a);
  const syncWindow = windows?.brief(a);
  return { ...rest, inventoryCount: inventory.length, ...(syncWindow ? { syncWindow } : {}) };
}

export function filterApps(apps: App[], q: AppsQuery): App[] {
  const text = q.q?.toLowerCase().trim();
  if (!text && !q.cluster && !q.env && !q.controller && !q.health && !q.sync && !q.drifted) return apps;
  return apps.filter(
    (a) =>
      (!q.cluster || a.cluster === q.cluster) &&
      (!q.env || a.env === q.env) &&
      (!q.controller || a.controller === q.controller) &&
      (!q.health || a.health === q.health) &&
      (!q.sync || a.sync === q.sync) &&
      (!q.drifted || !!a.drift === (q.drifted === 'true')) &&
      (!text || searchTextOf(a).includes(text)),
  );
}

export function sortEnvs(envs: Iterable<string>, order: string[]): string[] {
  const rank = (e: string) => {
    const i = order.indexOf(e);
    return i < 0 ? order.length : i;
  };
  return [...new Set(envs)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

export const appRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const windows = syncWindowsReader(deps);
  const summary = (a: App) => summarize(a, windows);
  /** the apps this person may read (their own Kubernetes identity's view too, when the console reviews access) */
  const readableApps = async (req: Parameters<typeof allowed>[0], among: App[] = deps.catalog.list()) => {
    const visible = deps.reviewer ? await deps.reviewer.visibleApps(req, among) : among;
    return visible.filter((a) => allowed(req, 'app.read', { cluster: a.cluster, env: a.env }));
  };

  app.get('/api/apps', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const q = parsed(AppsQuery, req.query);
    // a read sees every object change the BFF has observed (health updates are otherwise batched for 250 ms)
    deps.catalog.settleNow();
    // read in the same tick as the list below (readableApps takes the catalog's list before it awaits)
    const version = deps.catalog.version();
    const all = await readableApps(req);
    const apps = [...filterApps(all, q)].sort(compareApps);
    const envs = sortEnvs(
      all.map((a) => a.env),
      deps.envOrder,
    );
    if (q.first) {
      // the overview's first paint (issue 27): a few cards per group and the groups' sizes, whatever the total
      const head = overviewHead(apps, q.first);
      return validated(AppsResponse, {
        apps: head.apps.map(summary),
        total: all.length,
        envs,
        partial: true,
        groups: head.groups,
        version,
      });
    }
    return validated(AppsResponse, { apps: apps.map(summary), total: all.length, envs, version });
  });

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name',
    { config: { access: { action: 'app.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const cluster = deps.clusters.clusters.get(a.cluster)?.state;
      const sync = a.controller === 'argocd' ? argoSyncView(a, deps) : undefined;
      const rollouts = rolloutsOf(a, deps);
      const canaries = flaggerCanariesOf(a, deps);
      // only the apps it names and those that name it are checked (not every app of the console)
      const related = [
        ...(a.dependsOn ?? []).flatMap((d) => deps.catalog.get(appId(a.cluster, d.namespace, a.kind, d.name)) ?? []),
        ...deps.catalog.dependentsOf(a.id),
      ];
      const readable = related.length ? await readableApps(req, related) : [];
      const byId = new Map(readable.map((x) => [x.id, x]));
      const dependencies = a.dependsOn?.length ? dependenciesOf(a, (id) => byId.get(id)) : [];
      const dependents = deps.catalog
        .dependentsOf(a.id)
        .filter((d) => byId.has(d.id))
        .map((d) => ({ id: d.id, name: d.name, ...(d.waitingOn ? { waitingOn: d.waitingOn } : {}) }));
      const imageAutomation = imageAutomationFor(deps.clusters, a);
      const syncWindows = windows.forApp(a);
      return validated(AppResponse, {
        app: withoutSourceCredentials(a),
        ...(cluster ? { cluster } : {}),
        ...(sync ? { sync } : {}),
        ...(rollouts.length ? { rollouts } : {}),
        ...(canaries.length ? { canaries } : {}),
        ...(dependencies.length ? { dependencies } : {}),
        ...(dependents.length ? { dependents } : {}),
        ...(imageAutomation ? { imageAutomation } : {}),
        ...(syncWindows ? { syncWindows } : {}),
      });
    },
  );

  // an environment's Flux dependency graph (issue 26): "why isn't my app reconciling yet?"
  app.get('/api/dependencies', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const q = parsed(DependencyGraphQuery, req.query);
    deps.catalog.settleNow();
    const readable = await readableApps(req);
    const byId = new Map(readable.map((x) => [x.id, x]));
    return validated(
      DependencyGraphResponse,
      environmentGraph(q.env, readable, (id) => byId.get(id)),
    );
  });
};
