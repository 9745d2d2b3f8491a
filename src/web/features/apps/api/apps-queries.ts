import { queryOptions } from '@tanstack/react-query';
import { AppResponse, AppsResponse, ClustersResponse, appPath } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

export const appKeys = {
  all: ['apps'] as const,
  list: () => [...appKeys.all, 'list'] as const,
  detail: (id: string) => [...appKeys.all, 'detail', id] as const,
  /** under the app's detail key: every live update of the app refreshes it too */
  reconcileStatus: (id: string, requestedAt: string) =>
    [...appKeys.detail(id), 'reconcile-status', requestedAt] as const,
};
export const clusterKeys = { all: ['clusters'] as const };

export const getApps = (signal?: AbortSignal) => apiGet('/api/apps', AppsResponse, { signal });
export const appsQueryOptions = () =>
  queryOptions({ queryKey: appKeys.list(), queryFn: ({ signal }) => getApps(signal) });

export const getApp = (id: string, signal?: AbortSignal) => apiGet(`/api/apps/${appPath(id)}`, AppResponse, { signal });
export const appQueryOptions = (id: string) =>
  queryOptions({ queryKey: appKeys.detail(id), queryFn: ({ signal }) => getApp(id, signal) });

export const getClusters = (signal?: AbortSignal) => apiGet('/api/clusters', ClustersResponse, { signal });
export const clustersQueryOptions = () =>
  queryOptions({ queryKey: clusterKeys.all, queryFn: ({ signal }) => getClusters(signal) });
