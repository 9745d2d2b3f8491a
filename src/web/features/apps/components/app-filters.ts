// Filters live in the URL (shareable, back-button friendly); pure helpers here.
import type { AppSummary } from '../../../../api/schemas.ts';

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

export function applyFilters(apps: AppSummary[], f: AppFilters): AppSummary[] {
  const text = f.q.trim().toLowerCase();
  return apps.filter(
    (a) =>
      (!f.env || a.env === f.env) &&
      (!f.cluster || a.cluster === f.cluster) &&
      (!f.controller || a.controller === f.controller) &&
      (!f.health || a.health === f.health) &&
      (!f.sync || a.sync === f.sync) &&
      (!f.drifted || !!a.drift === (f.drifted === 'yes')) &&
      (!text ||
        `${a.name} ${a.namespace} ${a.cluster} ${a.env} ${a.source.url ?? ''} ${a.source.path ?? ''} ${a.source.revisionObserved ?? ''}`
          .toLowerCase()
          .includes(text)),
  );
}

/** env column → cluster → apps, columns in the configured env order. */
export function groupByEnvAndCluster(
  apps: AppSummary[],
  envOrder: string[],
): Array<{ env: string; clusters: Array<{ cluster: string; apps: AppSummary[] }> }> {
  const envs = [
    ...envOrder.filter((e) => apps.some((a) => a.env === e)),
    ...[...new Set(apps.map((a) => a.env))].filter((e) => !envOrder.includes(e)).sort(),
  ];
  return envs.map((env) => {
    const inEnv = apps.filter((a) => a.env === env);
    const clusters = [...new Set(inEnv.map((a) => a.cluster))].sort();
    return {
      env,
      clusters: clusters.map((cluster) => ({
        cluster,
        apps: inEnv.filter((a) => a.cluster === cluster).sort((x, y) => x.name.localeCompare(y.name)),
      })),
    };
  });
}
