// Flux dependencies as the app page and the environment page show them (issue 26; the rules are in
// domain/flux-deps.ts). Only apps the person may read are named: a dependency they may not read is unknown.
import type { App } from '../../domain/app.ts';
import { dependencyDepths, dependencyGraph, dependencyStates } from '../../domain/flux-deps.ts';
import type { DependencyGraphResponse, DependencyStateDto } from '../../api/schemas.ts';

type Lookup = (id: string) => App | undefined;

/** The app's dependencies with their Ready (a dependency the person may not read: unknown, no message). */
export function dependenciesOf(a: App, readable: Lookup): DependencyStateDto[] {
  return dependencyStates(a, a.dependsOn ?? [], readable);
}

const readyOf = (a: App) => a.conditions.find((c) => c.type === 'Ready');

/**
 * The dependency graph of an environment: its apps that depend on something or that something depends on, with
 * the dependencies they name (also when those are in another environment the person may read).
 */
export function environmentGraph(env: string, readableApps: App[], readable: Lookup): DependencyGraphResponse {
  const inEnv = readableApps.filter((a) => a.env === env);
  const dependedOn = new Set(
    inEnv.flatMap((a) =>
      (a.dependsOn ?? []).map((d) => `${a.cluster}/${d.namespace}/${a.kind.toLowerCase()}/${d.name}`),
    ),
  );
  const members = readableApps.filter((a) => (a.env === env && (a.dependsOn?.length ?? 0) > 0) || dependedOn.has(a.id));
  const g = dependencyGraph(
    members.map((app) => ({ app, deps: app.dependsOn ?? [] })),
    readable,
  );
  const depth = dependencyDepths(g);
  return {
    env,
    nodes: g.nodes.flatMap((n) => {
      const a = readable(n.id);
      if (!a) return [];
      const r = readyOf(a);
      return [
        {
          id: a.id,
          name: a.name,
          cluster: a.cluster,
          env: a.env,
          kind: a.kind,
          ready: n.ready,
          reason: r?.reason ?? null,
          message: r?.message?.slice(0, 500) ?? null,
          ...(a.waitingOn ? { waitingOn: a.waitingOn } : {}),
          depth: depth.get(a.id) ?? 0,
        },
      ];
    }),
    edges: g.edges,
    cycles: g.cycles,
    unknown: g.unknown.map((u) => ({ from: u.from, namespace: u.ref.namespace, name: u.ref.name })),
  };
}
