import { queryOptions } from '@tanstack/react-query';
import {
  EventsResponse,
  ObjectResponse,
  TreeResponse,
  appPath,
  type ObjectRefSchema,
} from '../../../../api/schemas.ts';
import type { z } from 'zod';
import { apiGet } from '../../../lib/api-client.ts';

type Ref = z.infer<typeof ObjectRefSchema>;

export const treeKeys = {
  all: ['tree'] as const,
  app: (appId: string) => [...treeKeys.all, appId] as const,
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

export const treeQueryOptions = (appId: string) =>
  queryOptions({
    queryKey: treeKeys.app(appId),
    queryFn: ({ signal }) => apiGet(`/api/apps/${appPath(appId)}/tree`, TreeResponse, signal),
  });

export const objectQueryOptions = (r: Ref) =>
  queryOptions({
    queryKey: treeKeys.object(r),
    queryFn: ({ signal }) =>
      apiGet(`/api/clusters/${encodeURIComponent(r.cluster)}/object?${refQuery(r)}`, ObjectResponse, signal),
  });

export const eventsQueryOptions = (r: Ref) =>
  queryOptions({
    queryKey: treeKeys.events(r),
    queryFn: ({ signal }) =>
      apiGet(`/api/clusters/${encodeURIComponent(r.cluster)}/events?${refQuery(r)}`, EventsResponse, signal),
  });
