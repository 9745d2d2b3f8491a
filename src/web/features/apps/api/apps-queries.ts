import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import {
  AppResponse,
  AppsResponse,
  AppSummarySchema,
  DependencyGraphResponse,
  ClustersResponse,
  appPath,
  type AppSummary,
} from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

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

// At 2,000 apps a full schema parse costs a few hundred milliseconds on a cold page (bench/scale.ts): the
// envelope and the first app are parsed with the schema (a contract change still fails loudly), every other
// app's essentials are checked by hand, as the tree does with its nodes.
const AppsEnvelope = AppsResponse.extend({ apps: z.array(z.unknown()) });
function parseApps(body: unknown): AppsResponse {
  const env = AppsEnvelope.parse(body);
  if (env.apps.length) AppSummarySchema.parse(env.apps[0]);
  for (const x of env.apps) {
    const a = x as Partial<AppSummary> | null;
    if (
      !a ||
      typeof a.id !== 'string' ||
      typeof a.name !== 'string' ||
      typeof a.cluster !== 'string' ||
      typeof a.env !== 'string' ||
      typeof a.namespace !== 'string' ||
      typeof a.health !== 'string' ||
      typeof a.sync !== 'string' ||
      typeof a.controller !== 'string' ||
      !a.source ||
      !a.automation
    )
      throw new Error('malformed app in the response');
  }
  return env as AppsResponse;
}
const AppsFast = z.unknown().transform(parseApps);

export const getApps = (signal?: AbortSignal) => apiGet('/api/apps', AppsFast, { signal });
export const appsQueryOptions = () =>
  queryOptions({ queryKey: appKeys.list(), queryFn: ({ signal }) => getApps(signal) });

export const getApp = (id: string, signal?: AbortSignal) => apiGet(`/api/apps/${appPath(id)}`, AppResponse, { signal });
export const appQueryOptions = (id: string) =>
  queryOptions({ queryKey: appKeys.detail(id), queryFn: ({ signal }) => getApp(id, signal) });

export const getClusters = (signal?: AbortSignal) => apiGet('/api/clusters', ClustersResponse, { signal });
export const clustersQueryOptions = () =>
  queryOptions({ queryKey: clusterKeys.all, queryFn: ({ signal }) => getClusters(signal) });

export const getDependencyGraph = (env: string, signal?: AbortSignal) =>
  apiGet(`/api/dependencies?env=${encodeURIComponent(env)}`, DependencyGraphResponse, { signal });
/** an environment's dependency graph: read again every 5 s while shown (a dependency's Ready changes it) */
export const dependencyGraphQueryOptions = (env: string) =>
  queryOptions({
    queryKey: appKeys.dependencies(env),
    queryFn: ({ signal }) => getDependencyGraph(env, signal),
    refetchInterval: 5000,
  });
