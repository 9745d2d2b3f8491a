// Filters live in the URL (shareable, back-button friendly); pure helpers here.
import type { AppSummary } from '../../../../api/schemas.ts';
import { byCodeUnits, searchText } from '../../../../domain/overview.ts';

export interface AppFilters {
  q: string;
  env: string;
  cluster: string;
  controller: string;
  health: string;
  sync: string;
  /** 'yes': apps with open drift; 'no': apps without */
  drifted: string;
}

export const FILTER_KEYS: Array<keyof AppFilters> = ['q', 'env', 'cluster', 'controller', 'health', 'sync', 'drifted'];

export function readFilters(sp: URLSearchParams): AppFilters {
  return {
    q: sp.get('q') ?? '',
    env: sp.get('env') ?? '',
    cluster: sp.get('cluster') ?? '',
    controller: sp.get('controller') ?? '',
    health: sp.get('health') ?? '',
    sync: sp.get('sync') ?? '',
    drifted: sp.get('drifted') ?? '',
  };
}

/** Does the app pass the filters? (the search text is lower-cased once per app object: `searchText`) */
export function matches(a: AppSummary, f: AppFilters, text = f.q.trim().toLowerCase()): boolean {
  return (
    (!f.env || a.env === f.env) &&
    (!f.cluster || a.cluster === f.cluster) &&
    (!f.controller || a.controller === f.controller) &&
    (!f.health || a.health === f.health) &&
    (!f.sync || a.sync === f.sync) &&
    (!f.drifted || !!a.drift === (f.drifted === 'yes')) &&
    (!text || searchText(a).includes(text))
  );
}

export interface AppGroup {
  env: string;
  clusters: Array<{ cluster: string; apps: AppSummary[] }>;
}

/**
 * env column → cluster → apps (by name), columns in the configured env order. One pass and code-unit sorts:
 * 10,000 apps group in a few milliseconds.
 */
export function groupByEnvAndCluster(apps: AppSummary[], envOrder: string[]): AppGroup[] {
  const byEnv = new Map<string, Map<string, AppSummary[]>>();
  for (const a of apps) {
    let env = byEnv.get(a.env);
    if (!env) byEnv.set(a.env, (env = new Map()));
    const list = env.get(a.cluster);
    if (list) list.push(a);
    else env.set(a.cluster, [a]);
  }
  const envs = [
    ...envOrder.filter((e) => byEnv.has(e)),
    ...[...byEnv.keys()].filter((e) => !envOrder.includes(e)).sort(byCodeUnits),
  ];
  return envs.map((env) => {
    const clusters = byEnv.get(env) ?? new Map<string, AppSummary[]>();
    return {
      env,
      clusters: [...clusters.keys()].sort(byCodeUnits).map((cluster) => ({
        cluster,
        apps: sortedByName(clusters.get(cluster) ?? []),
      })),
    };
  });
}

/** the server answers in name order; a live update appends: sort only when needed */
function sortedByName(apps: AppSummary[]): AppSummary[] {
  for (let i = 1; i < apps.length; i++)
    if (byCodeUnits((apps[i - 1] as AppSummary).name, (apps[i] as AppSummary).name) > 0)
      return apps.sort((x, y) => byCodeUnits(x.name, y.name));
  return apps;
}

/** The groups with only the apps that pass the filters (empty groups and columns dropped), order kept. */
export function filterGroups(groups: AppGroup[], f: AppFilters): AppGroup[] {
  const text = f.q.trim().toLowerCase();
  if (!text && !FILTER_KEYS.some((k) => f[k])) return groups;
  const out: AppGroup[] = [];
  for (const g of groups) {
    const clusters = g.clusters
      .map((c) => ({ cluster: c.cluster, apps: c.apps.filter((a) => matches(a, f, text)) }))
      .filter((c) => c.apps.length > 0);
    if (clusters.length) out.push({ env: g.env, clusters });
  }
  return out;
}
