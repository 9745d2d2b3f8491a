import { queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import { appPath } from '../../../../api/plain.ts';
import type { ObjectRefSchema } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

type Ref = z.infer<typeof ObjectRefSchema>;

export const treeKeys = {
  all: ['tree'] as const,
  app: (appId: string) => [...treeKeys.all, appId] as const,
  level: (appId: string, depth: number | 'all') => [...treeKeys.all, appId, depth] as const,
  object: (r: Ref) => ['object', r.cluster, r.group, r.version, r.kind, r.namespace ?? '', r.name] as const,
  events: (r: Ref) => ['events', r.cluster, r.group, r.version, r.kind, r.namespace ?? '', r.name] as const,
};

const refQuery = (r: Ref) =>
  new URLSearchParams({
    group: r.group,
    version: r.version,
    kind: r.kind,
    name: r.name,
    ...(r.namespace ? { namespace: r.namespace } : {}),
  });

/** The whole tree, or only its first `depth` levels (a fast first paint for very large apps). */
export const treeQueryOptions = (appId: string, depth: number | 'all' = 'all') =>
  queryOptions({
    queryKey: treeKeys.level(appId, depth),
    queryFn: ({ signal }) =>
      apiGet(`/api/apps/${appPath(appId)}/tree${depth === 'all' ? '' : `?depth=${depth}`}`, lazy('TreeFast'), {
        signal,
      }),
  });

export const objectQueryOptions = (r: Ref) =>
  queryOptions({
    queryKey: treeKeys.object(r),
    queryFn: ({ signal }) =>
      apiGet(`/api/clusters/${encodeURIComponent(r.cluster)}/object?${refQuery(r)}`, lazy('ObjectResponse'), {
        signal,
      }),
  });

export const eventsQueryOptions = (r: Ref) =>
  queryOptions({
    queryKey: treeKeys.events(r),
    queryFn: ({ signal }) =>
      apiGet(`/api/clusters/${encodeURIComponent(r.cluster)}/events?${refQuery(r)}`, lazy('EventsResponse'), {
        signal,
      }),
  });
