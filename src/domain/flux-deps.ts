// Flux dependencies (issue 26, part 1): a Kustomization's or HelmRelease's `spec.dependsOn` as a graph of the
// environment's apps, and "why isn't my app reconciling yet?" in one line when kustomize-controller holds it back
// (its Ready condition says DependencyNotReady): which dependency, and what that dependency's own Ready says. Pure.
import { appId, type App } from './app.ts';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

export interface DependencyRef {
  namespace: string;
  name: string;
}

/** `spec.dependsOn` of a Flux object (a missing namespace is the object's own, as Flux reads it). */
export function dependsOnOf(raw: Obj): DependencyRef[] {
  const ns = str(asObj(raw.metadata).namespace) ?? '';
  const list = asObj(raw.spec).dependsOn;
  if (!Array.isArray(list)) return [];
  return list
    .map(asObj)
    .map((d) => ({ namespace: str(d.namespace) ?? ns, name: str(d.name) ?? '' }))
    .filter((d) => d.name);
}

export interface DependencyState extends DependencyRef {
  /** the app id when the console knows the dependency (same cluster, same kind), else null: unknown, never Ready */
  id: string | null;
  ready: 'True' | 'False' | 'Unknown';
  reason: string | null;
  message: string | null;
}

/** Each dependency of an app and its Ready condition, looked up among the apps of its cluster. */
export function dependencyStates(
  app: App,
  deps: DependencyRef[],
  apps: App[] | ((id: string) => App | undefined),
): DependencyState[] {
  const find = typeof apps === 'function' ? apps : (id: string) => apps.find((a) => a.id === id);
  return deps.map((d) => {
    const dep = find(appId(app.cluster, d.namespace, app.kind, d.name));
    const ready = dep?.conditions.find((c) => c.type === 'Ready');
    return {
      ...d,
      id: dep?.id ?? null,
      ready: ready?.status === 'True' ? 'True' : ready?.status === 'False' ? 'False' : 'Unknown',
      reason: ready?.reason ?? (dep ? null : 'NotFound'),
      message: ready?.message ?? (dep ? null : `no ${app.kind} ${d.namespace}/${d.name} on ${app.cluster}`),
    };
  });
}

/**
 * The one line of the app header: undefined unless the controller holds the app back for a dependency (its Ready
 * is False/Unknown with reason DependencyNotReady). Names the dependencies that are not Ready with their own reason.
 */
export function waitingOn(
  app: App,
  states: DependencyState[],
  /** messages: false — the line names each dependency and its reason only (it is shown wherever the app is) */
  opts: { messages?: boolean } = {},
): string | undefined {
  const ready = app.conditions.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'True' || ready.reason !== 'DependencyNotReady') return undefined;
  const blocking = states.filter((s) => s.ready !== 'True');
  // Every dependency is Ready now: the controller's condition is older than that. Never repeat its "… is not ready"
  // beside a dependency shown Ready (issue 39): say what holds the app instead.
  if (!blocking.length && states.length) {
    if (app.automation?.suspended)
      return app.freeze
        ? 'its dependencies are Ready; it is frozen, so its controller re-checks them when the freeze ends'
        : 'its dependencies are Ready; reconciliation is suspended, so its controller re-checks them when it resumes';
    return 'its dependencies are Ready now; its controller moves on at its next retry (Flux retries every 30 s by default)';
  }
  if (!blocking.length) return `waiting on a dependency: ${ready.message ?? 'DependencyNotReady'}`;
  return `waiting on ${blocking
    .map(
      (s) =>
        `${s.name} (${s.ready === 'False' ? 'not Ready' : 'Ready unknown'}${s.reason ? `: ${s.reason}` : ''}${
          s.message && opts.messages !== false ? ` — ${s.message.slice(0, 200)}` : ''
        })`,
    )
    .join(', ')}`;
}

export interface DependencyGraph {
  nodes: Array<{ id: string; name: string; ready: DependencyState['ready'] }>;
  /** from the app to what it depends on */
  edges: Array<{ from: string; to: string }>;
  /** dependency cycles (Flux never reconciles their members), each as the ids around it */
  cycles: string[][];
  /** dependencies the console does not know (another cluster, or missing) */
  unknown: Array<{ from: string; ref: DependencyRef }>;
}

/** The dependency graph of a set of apps (an environment's), with cycles found by depth-first search. */
export function dependencyGraph(
  apps: Array<{ app: App; deps: DependencyRef[] }>,
  all: App[] | ((id: string) => App | undefined),
): DependencyGraph {
  const nodes = new Map<string, DependencyGraph['nodes'][number]>();
  const edges: DependencyGraph['edges'] = [];
  const unknown: DependencyGraph['unknown'] = [];
  const readyOf = (a: App): DependencyState['ready'] => {
    const r = a.conditions.find((c) => c.type === 'Ready')?.status;
    return r === 'True' ? 'True' : r === 'False' ? 'False' : 'Unknown';
  };
  for (const { app, deps } of apps) {
    nodes.set(app.id, { id: app.id, name: app.name, ready: readyOf(app) });
    for (const s of dependencyStates(app, deps, all)) {
      if (!s.id) {
        unknown.push({ from: app.id, ref: { namespace: s.namespace, name: s.name } });
        continue;
      }
      edges.push({ from: app.id, to: s.id });
      if (!nodes.has(s.id)) nodes.set(s.id, { id: s.id, name: s.name, ready: s.ready });
    }
  }
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string) => {
    state.set(id, 'open');
    stack.push(id);
    for (const next of out.get(id) ?? []) {
      if (state.get(next) === 'open') cycles.push(stack.slice(stack.indexOf(next)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(id, 'done');
  };
  for (const id of [...nodes.keys()].sort()) if (!state.has(id)) visit(id);
  return { nodes: [...nodes.values()], edges, cycles, unknown };
}

/**
 * Per node: the longest chain of dependencies beneath it (0: depends on nothing in the graph), so a drawing puts
 * what is applied first on the left. Members of a cycle stop counting where the cycle closes.
 */
export function dependencyDepths(g: Pick<DependencyGraph, 'nodes' | 'edges'>): Map<string, number> {
  const out = new Map<string, string[]>();
  for (const e of g.edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  const depth = new Map<string, number>();
  const open = new Set<string>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (open.has(id)) return 0;
    open.add(id);
    const d = Math.max(-1, ...(out.get(id) ?? []).map(visit)) + 1;
    open.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const n of g.nodes) visit(n.id);
  return depth;
}
