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

/** A window onto a very large tree (BFF: ?window=N, domain/tree-window.ts): a page of a sibling set, or a filter. */
export interface TreeWindowParams {
  window: number;
  depth: number;
  under?: string;
  /** a later page of the top set: the `next` cursor of the page before (a node id, or `^`) */
  after?: string;
  /** with `after`: a range, every node up to this one included (a node id, or `$`: to the end) */
  through?: string;
  q?: string;
  health?: string;
  sync?: string;
  kind?: string;
  problems?: boolean;
  limit?: number;
}

export function treeWindowSearch(p: TreeWindowParams): string {
  const s = new URLSearchParams({ window: String(p.window), depth: String(p.depth) });
  if (p.under) s.set('under', p.under);
  if (p.after) s.set('after', p.after);
  if (p.through) s.set('through', p.through);
  for (const k of ['q', 'health', 'sync', 'kind'] as const) if (p[k]) s.set(k, p[k]);
  if (p.problems) s.set('problems', '1');
  if (p.limit) s.set('limit', String(p.limit));
  return s.toString();
}

export const fetchTreeWindow = (appId: string, p: TreeWindowParams, signal?: AbortSignal) =>
  apiGet(`/api/apps/${appPath(appId)}/tree?${treeWindowSearch(p)}`, lazy('TreeFast'), { signal });

export const treeWindowQueryOptions = (appId: string, p: TreeWindowParams) =>
  queryOptions({
    queryKey: [...treeKeys.app(appId), 'window', treeWindowSearch(p)] as const,
    queryFn: ({ signal }) => fetchTreeWindow(appId, p, signal),
  });

/** children per sibling set in a window of a large tree */
export const TREE_WINDOW = 200;

/** The first answer the tree view asks for: its first two levels, a window of each sibling set. */
export const firstTreeWindowOptions = (appId: string, window = TREE_WINDOW) =>
  treeWindowQueryOptions(appId, { window, depth: 1 });

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
