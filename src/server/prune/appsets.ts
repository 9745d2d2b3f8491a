// Argo CD ApplicationSets (issue 24): each cluster's ApplicationSets read live (the console's own connection),
// what their generators produce now (domain/appset.ts; the Git directory generator reads the repository through
// the console's Git mirrors), the Applications they own, and the shrink the applicationset-controller would carry
// out, planned as a prune preview of Applications: the Applications and, where their resources finalizer deletes
// what they manage, those live objects (and what their deletion takes with them). deploy/prune-admission-policy.yaml
// (gitops-console-appset-shrink) denies the controller each of those deletions until the console lists its uid,
// which it does only for an approved preview (src/server/prune). Unknown is never empty: a generator the console
// cannot evaluate, or Git it cannot read, plans nothing.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appId, type App } from '../../domain/app.ts';
import {
  DEFAULT_APPSET_LIMITS,
  evaluateGenerators,
  generatedNames,
  ownedBy,
  parseAppSet,
  shrinkOf,
  type AppSetSpec,
  type GeneratorResult,
  type Shrink,
} from '../../domain/appset.ts';
import type { Obj } from '../../domain/object-meta.ts';
import { deletionCount, planPrune, pruneKey } from '../../domain/prune.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import type { AppCatalog } from '../apps/index.ts';
import { git, GitMirrors } from '../git/mirror.ts';
import { HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { gatherCascades } from './cascades.ts';
import type { PruneContext } from './context.ts';
import type { PreviewCandidate, PreviewDoc } from './model.ts';
import { previewCandidate } from './plan-service.ts';
import type { AppSetCondition, AppSetSummary, AppSetView } from '../../api/appsets.ts';

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

const APPSETS = '/apis/argoproj.io/v1alpha1/applicationsets';
const appsPath = (ns: string) => `/apis/argoproj.io/v1alpha1/namespaces/${encodeURIComponent(ns)}/applications`;

export interface AppSetDeps {
  catalog: AppCatalog;
  /** the connected clusters */
  clusters(): string[];
  conn(cluster: string): ClusterConnection;
  dataDir?: string | undefined;
}

const stringParams = (p: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

export class AppSetService {
  private readonly mirrors: GitMirrors;
  /** the ApplicationSets as prune previews see them (their id, cluster and scope), by id */
  private readonly known = new Map<string, App>();

  constructor(private readonly deps: AppSetDeps) {
    this.mirrors = GitMirrors.for(join(deps.dataDir ?? join(tmpdir(), 'gitops-console'), 'appset-git'));
  }

  static idOf(cluster: string, namespace: string, name: string): string {
    return appId(cluster, namespace, 'ApplicationSet', name);
  }

  /**
   * What an ApplicationSet's prune previews belong to: its id, its cluster and the environment `*` (its generators
   * reach every environment of the cluster: requesting and approving its shrink needs a role on all of them).
   */
  appOf(id: string): App | undefined {
    return this.known.get(id);
  }

  private remember(s: AppSetSpec, cluster: string, owned: ObjectRef[]): App {
    const a: App = {
      id: AppSetService.idOf(cluster, s.namespace, s.name),
      cluster,
      controller: 'argocd',
      // not an app kind: this App stands for the ApplicationSet only where prune previews look an app up by id
      kind: 'ApplicationSet' as unknown as App['kind'],
      namespace: s.namespace,
      name: s.name,
      env: '*',
      source: { kind: 'Git' },
      automation: { autoSync: true, selfHeal: false, prune: true, suspended: false },
      sync: 'Unknown',
      health: 'Unknown',
      healthMessage: 'an ApplicationSet: its Applications carry health',
      conditions: [],
      inventory: owned,
      warnings: [],
    };
    this.known.set(a.id, a);
    return a;
  }

  private async listSets(cluster: string): Promise<Obj[]> {
    const res = await this.deps.conn(cluster).request('GET', APPSETS, { timeoutMs: 10_000 });
    if (res.status === 404) return []; // ApplicationSets not served here
    if (res.status !== 200) throw this.deps.conn(cluster).httpError(res, 'list ApplicationSets');
    return (asObj(JSON.parse(res.body)).items as Obj[] | undefined) ?? [];
  }

  private async listApps(cluster: string, ns: string): Promise<Obj[]> {
    const r = await this.deps.conn(cluster).json<{ items?: Obj[] }>('GET', appsPath(ns), { timeoutMs: 10_000 });
    return r.items ?? [];
  }

  private summaryOf(cluster: string, o: Obj, apps: Obj[]): AppSetSummary {
    const s = parseAppSet(o);
    const owned = ownedBy(s, apps);
    const conditions = conditionsOf(o);
    const error = conditions.find((c) => c.type === 'ErrorOccurred' && c.status === 'True')?.message ?? null;
    return {
      id: AppSetService.idOf(cluster, s.namespace, s.name),
      cluster,
      namespace: s.namespace,
      name: s.name,
      generators: s.generators.map((g) => (g.kind === 'other' ? g.name : g.kind)),
      applications: owned.map((a) => ({ name: a.name, appId: appId(cluster, a.namespace, 'Application', a.name) })),
      error,
      heldByConsole: !!error && error.includes('gitops-console-appset-shrink'),
    };
  }

  /** Every connected cluster's ApplicationSets (a cluster whose list fails is named in `unknown`). */
  async list(): Promise<{ appsets: AppSetSummary[]; unknown: string[] }> {
    const out: AppSetSummary[] = [];
    const unknown: string[] = [];
    for (const cluster of this.deps.clusters()) {
      try {
        const sets = await this.listSets(cluster);
        const byNs = new Map<string, Obj[]>();
        for (const o of sets) {
          const ns = str(asObj(o.metadata).namespace) ?? 'argocd';
          if (!byNs.has(ns)) byNs.set(ns, await this.listApps(cluster, ns));
          out.push(this.summaryOf(cluster, o, byNs.get(ns) ?? []));
        }
      } catch (e) {
        unknown.push(`${cluster}: ${message(e)}`);
      }
    }
    return { appsets: out.sort((a, b) => a.id.localeCompare(b.id)), unknown };
  }

  private async read(cluster: string, namespace: string, name: string): Promise<{ o: Obj; apps: Obj[] }> {
    if (!this.deps.clusters().includes(cluster)) throw new HttpError(404, 'NotFound', `no cluster ${cluster}`);
    const conn = this.deps.conn(cluster);
    const res = await conn.request(
      'GET',
      `/apis/argoproj.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/applicationsets/${encodeURIComponent(name)}`,
      { timeoutMs: 10_000 },
    );
    if (res.status === 404)
      throw new HttpError(404, 'NotFound', `no ApplicationSet ${namespace}/${name} in ${cluster}`);
    if (res.status !== 200) throw conn.httpError(res, `GET ApplicationSet ${name}`);
    return { o: JSON.parse(res.body) as Obj, apps: await this.listApps(cluster, namespace) };
  }

  /** Every directory of a Git revision (the Git directory generator's input), through the console's mirrors. */
  private dirs = async (repoURL: string, revision: string): Promise<string[]> =>
    this.mirrors.with(repoURL, 'fetch', async (dir) => {
      let rev = revision;
      if (!rev || rev === 'HEAD') {
        const heads = (await git(['-C', dir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads'])).split('\n');
        rev = heads.includes('main') ? 'main' : heads.includes('master') ? 'master' : (heads[0] ?? 'HEAD');
      }
      const out = await git(['-C', dir, 'ls-tree', '-r', '-d', '--name-only', `${rev}^{tree}`]);
      return out.split('\n').filter(Boolean);
    });

  /** One ApplicationSet: its generators' output now, its Applications, its shrink. */
  async view(cluster: string, namespace: string, name: string): Promise<AppSetView> {
    const { o, apps } = await this.read(cluster, namespace, name);
    return (await this.evaluate(cluster, o, apps)).view;
  }

  private async evaluate(
    cluster: string,
    o: Obj,
    apps: Obj[],
  ): Promise<{ view: AppSetView; spec: AppSetSpec; shrink: Shrink; results: GeneratorResult[] }> {
    const s = parseAppSet(o);
    const results = await evaluateGenerators(s, this.dirs);
    const generated = generatedNames(s, results);
    const owned = ownedBy(s, apps);
    const shrink = shrinkOf(s, owned, generated);
    const ownedRefs: ObjectRef[] = owned.map((a) => ({
      cluster,
      group: 'argoproj.io',
      version: 'v1alpha1',
      kind: 'Application',
      namespace: a.namespace,
      name: a.name,
    }));
    this.remember(s, cluster, ownedRefs);
    const keep = generated.names ? new Set(generated.names) : null;
    const st = asObj(o.status);
    const view: AppSetView = {
      ...this.summaryOf(cluster, o, apps),
      uid: s.uid,
      goTemplate: s.goTemplate,
      applicationsSync: s.applicationsSync,
      preserveResourcesOnDeletion: s.preserveResourcesOnDeletion,
      generatorResults: results.map((r) => ({
        kind: r.kind,
        detail: r.detail,
        params: r.params ? r.params.map(stringParams) : null,
        unknown: r.unknown ?? null,
      })),
      generated: generated.names,
      unknown: generated.unknown,
      owned: owned.map((a) => {
        const id = appId(cluster, a.namespace, 'Application', a.name);
        const known = this.deps.catalog.get(id);
        return {
          name: a.name,
          appId: id,
          generated: keep ? keep.has(a.name) : null,
          sync: known?.sync ?? 'Unknown',
          health: known?.health ?? 'Unknown',
          env: known?.env ?? null,
          resources: a.resources.length,
          cascades: a.finalizers.includes('resources-finalizer.argocd.argoproj.io'),
        };
      }),
      shrink: {
        state: shrink.state,
        reasons: shrink.reasons,
        removed: shrink.removed.map((r) => ({ name: r.name, resources: r.resources.length, cascades: r.cascades })),
      },
      conditions: conditionsOf(o),
      rollingSync: s.rollingSync
        ? {
            steps: s.rollingSync,
            applications: (Array.isArray(st.applicationStatus) ? (st.applicationStatus as unknown[]) : []).map((x) => {
              const a = asObj(x);
              return {
                application: str(a.application) ?? '?',
                status: str(a.status) ?? 'Unknown',
                step: str(a.step) ?? null,
                message: str(a.message) ?? null,
              };
            }),
          }
        : null,
      limits: DEFAULT_APPSET_LIMITS,
    };
    return { view, spec: s, shrink, results };
  }

  /**
   * The shrink as a prune preview's plan: the Applications the controller would delete (read live: uid and the
   * spec digest version.ts pins) and, for each whose resources finalizer deletes what it manages, those live objects
   * and what their deletion takes with them. The limits are the ApplicationSet's: the share of its Applications
   * removed and the number of objects deleted; over either, the override (two reviewers and a typed confirmation).
   */
  async planShrink(
    ctx: PruneContext,
    cluster: string,
    namespace: string,
    name: string,
  ): Promise<{ app: App; doc: PreviewDoc }> {
    const { o, apps } = await this.read(cluster, namespace, name);
    const { spec, shrink, view } = await this.evaluate(cluster, o, apps);
    const app = this.remember(
      spec,
      cluster,
      view.owned.map((a) => ({
        cluster,
        group: 'argoproj.io',
        version: 'v1alpha1',
        kind: 'Application',
        namespace,
        name: a.name,
      })),
    );
    const base = {
      controller: 'argocd' as const,
      revision: null,
      renderHash: null,
      renderer: 'applicationset-generators',
      limits: DEFAULT_APPSET_LIMITS,
      propagationPolicy: ctx.propagation,
      batchSize: ctx.batchSize,
      confirmation: null,
      deletedBy: 'controller' as const,
      appSet: { namespace, name, uid: spec.uid },
    };
    const unknown = (reason: string): { app: App; doc: PreviewDoc } => ({
      app,
      doc: { ...base, planState: 'unknown', reasons: [reason], candidates: [] },
    });
    if (shrink.state === 'unknown') return unknown(shrink.reasons.join('; '));
    if (shrink.state === 'nothing')
      return { app, doc: { ...base, planState: 'nothing', reasons: shrink.reasons, candidates: [] } };
    const appRef = (n: string): ObjectRef => ({
      cluster,
      group: 'argoproj.io',
      version: 'v1alpha1',
      kind: 'Application',
      namespace,
      name: n,
    });
    const refs: ObjectRef[] = [];
    for (const r of shrink.removed) {
      if (r.cascades) for (const x of r.resources) refs.push({ cluster, ...x });
      refs.push(appRef(r.name));
    }
    const live = new Map<string, Obj>();
    try {
      for (const r of refs) {
        const x = await ctx.live.read(r);
        if (x) live.set(pruneKey(r), x);
      }
    } catch (e) {
      return unknown(
        `reading the Applications and their objects live failed, so nothing can be planned: ${message(e)}`,
      );
    }
    const roots = [...live.values()];
    let cascades: Awaited<ReturnType<typeof gatherCascades>>;
    try {
      cascades = await gatherCascades(ctx, cluster, roots);
    } catch (e) {
      return unknown(
        `reading what the deletions would take with them failed, so nothing can be planned: ${message(e)}`,
      );
    }
    const kept = (view.generated ?? []).map(appRef);
    const plan = planPrune({
      controller: 'argocd',
      inventory: refs.filter((r) => live.has(pruneKey(r))),
      desired: kept,
      live: [...roots, ...cascades.live],
      unknown: cascades.unknown,
      // the ApplicationSet's limits are judged below, on its Applications
      limits: { maxDeletions: Number.MAX_SAFE_INTEGER, maxFraction: 1 },
    });
    // Applications last: their objects are listed before the deletion that deletes them
    const order = (c: { ref: ObjectRef }) => (c.ref.kind === 'Application' && c.ref.group === 'argoproj.io' ? 1 : 0);
    const candidates: PreviewCandidate[] = [...plan.candidates]
      .sort((a, b) => order(a) - order(b))
      .map((c) => previewCandidate(c, live.get(pruneKey(c.ref))));
    const reasons = [...shrink.reasons, ...plan.reasons.filter((r) => !r.startsWith('the render is empty'))];
    const removedApps = shrink.removed.length;
    const fraction = shrink.owned ? removedApps / shrink.owned : 0;
    const limits = DEFAULT_APPSET_LIMITS;
    if (fraction > limits.maxFraction)
      reasons.unshift(
        `${removedApps} of ${shrink.owned} Applications (${Math.round(fraction * 100)}%) would be deleted, over the ApplicationSet limit of ${Math.round(limits.maxFraction * 100)}%`,
      );
    const total = deletionCount(plan.candidates);
    if (total > limits.maxDeletions) reasons.unshift(`${total} deletions exceed the limit of ${limits.maxDeletions}`);
    const over = fraction > limits.maxFraction || total > limits.maxDeletions;
    const planState = plan.state === 'ready' && over ? 'needs-override' : plan.state;
    const deletable = candidates.filter((c) => c.deletable);
    return {
      app,
      doc: {
        ...base,
        planState,
        reasons,
        candidates,
        confirmation:
          planState === 'needs-override' ? `delete ${deletable.filter(isApp).length} Applications of ${name}` : null,
      },
    };
  }
}

const isApp = (c: { ref: ObjectRef }) => c.ref.group === 'argoproj.io' && c.ref.kind === 'Application';

function conditionsOf(o: Obj): AppSetCondition[] {
  const c = asObj(o.status).conditions;
  return (Array.isArray(c) ? (c as unknown[]) : []).map((x) => {
    const y = asObj(x);
    return {
      type: str(y.type) ?? '?',
      status: str(y.status) ?? 'Unknown',
      reason: str(y.reason) ?? null,
      message: str(y.message) ?? null,
    };
  });
}
