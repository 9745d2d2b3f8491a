import { queryOptions } from '@tanstack/react-query';
import { appPath } from '../../../../api/plain.ts';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

export const appKeys = {
  all: ['apps'] as const,
  list: () => [...appKeys.all, 'list'] as const,
  detail: (id: string) => [...appKeys.all, 'detail', id] as const,
  dependencies: (env: string) => [...appKeys.all, 'dependencies', env] as const,
  /** under the app's detail key: every live update of the app refreshes it too */
  reconcileStatus: (id: string, requestedAt: string) =>
    [...appKeys.detail(id), 'reconcile-status', requestedAt] as const,
};
export const clusterKeys = { all: ['clusters'] as const };

export const getApps = (signal?: AbortSignal) => apiGet('/api/apps', lazy('AppsFast'), { signal });
export const appsQueryOptions = () =>
  queryOptions({ queryKey: appKeys.list(), queryFn: ({ signal }) => getApps(signal) });

/** cards per environment × cluster group in the overview's first paint */
export const OVERVIEW_FIRST = 24;

/**
 * The overview's first paint (issue 27): each group's first `n` cards and every group's size. Outside
 * `appKeys.all` on purpose: live updates and invalidations go to the whole list, which replaces this at once.
 */
export const appsHeadQueryOptions = (n: number) =>
  queryOptions({
    queryKey: ['apps-head', n] as const,
    queryFn: ({ signal }) => apiGet(`/api/apps?first=${n}`, lazy('AppsFast'), { signal }),
    staleTime: Infinity,
  });

export const getApp = (id: string, signal?: AbortSignal) =>
  apiGet(`/api/apps/${appPath(id)}`, lazy('AppResponse'), { signal });
export const appQueryOptions = (id: string) =>
  queryOptions({ queryKey: appKeys.detail(id), queryFn: ({ signal }) => getApp(id, signal) });

export const getClusters = (signal?: AbortSignal) => apiGet('/api/clusters', lazy('ClustersResponse'), { signal });
export const clustersQueryOptions = () =>
  queryOptions({ queryKey: clusterKeys.all, queryFn: ({ signal }) => getClusters(signal) });

export const getDependencyGraph = (env: string, signal?: AbortSignal) =>
  apiGet(`/api/dependencies?env=${encodeURIComponent(env)}`, lazy('DependencyGraphResponse'), { signal });
/** an environment's dependency graph: read again every 5 s while shown (a dependency's Ready changes it) */
export const dependencyGraphQueryOptions = (env: string) =>
  queryOptions({
    queryKey: appKeys.dependencies(env),
    queryFn: ({ signal }) => getDependencyGraph(env, signal),
    refetchInterval: 5000,
  });
