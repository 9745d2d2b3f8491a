import { queryOptions } from '@tanstack/react-query';
import {
  EventsResponse,
  ObjectResponse,
  TreeResponse,
  appPath,
  type ObjectRefSchema,
  type TreeNodeDto,
} from '../../../../api/schemas.ts';
import { z } from 'zod';
import { apiGet } from '../../../lib/api-client.ts';

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

// The tree can hold 20,000 nodes: parse the envelope and summary with the schema, and check each node's
// essentials by hand (zod per node would cost hundreds of milliseconds on the main thread).
const TreeEnvelope = TreeResponse.extend({ nodes: z.array(z.unknown()) });
function parseTree(body: unknown): TreeResponse {
  const env = TreeEnvelope.parse(body);
  for (const n of env.nodes) {
    const node = n as Partial<TreeNodeDto> | null;
    if (
      !node ||
      typeof node.id !== 'string' ||
      typeof node.depth !== 'number' ||
      !node.ref ||
      typeof node.health !== 'string'
    ) {
      throw new Error('malformed tree node in the response');
    }
  }
  return env as TreeResponse;
}
const TreeFast = z.unknown().transform(parseTree);

/** The whole tree, or only its first `depth` levels (a fast first paint for very large apps). */
export const treeQueryOptions = (appId: string, depth: number | 'all' = 'all') =>
  queryOptions({
    queryKey: treeKeys.level(appId, depth),
    queryFn: ({ signal }) =>
      apiGet(`/api/apps/${appPath(appId)}/tree${depth === 'all' ? '' : `?depth=${depth}`}`, TreeFast, { signal }),
  });

export const objectQueryOptions = (r: Ref) =>
  queryOptions({
    queryKey: treeKeys.object(r),
    queryFn: ({ signal }) =>
      apiGet(`/api/clusters/${encodeURIComponent(r.cluster)}/object?${refQuery(r)}`, ObjectResponse, { signal }),
  });

export const eventsQueryOptions = (r: Ref) =>
  queryOptions({
    queryKey: treeKeys.events(r),
    queryFn: ({ signal }) =>
      apiGet(`/api/clusters/${encodeURIComponent(r.cluster)}/events?${refQuery(r)}`, EventsResponse, { signal }),
  });
