// Where the resource tree's nodes come from. A tree of up to LARGE_TREE objects is fetched whole (first its
// first two levels, for a fast first paint). A larger one (issue 27: 100,000 objects) is never held whole in
// the browser: the view holds windows of it (200 children per sibling set, problems first), loads a node's
// children when it is expanded and the next 200 on "Show more", and asks the BFF to filter the whole tree.
// The browser's memory then grows with what a person opened, not with the app.
import { keepPreviousData, useQueries, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { TreeNodeDto, TreeResponse } from '../../../../api/schemas.ts';
import { filterActive, type TreeFilter } from '../../../../domain/tree-window.ts';
import { firstTreeWindowOptions, TREE_WINDOW, treeQueryOptions, treeWindowQueryOptions } from './tree-queries.ts';

/** above this many objects the tree is windowed */
export const LARGE_TREE = 5000;
/** at most this many matches of a filter (the total is said) */
export const FILTER_LIMIT = 1000;

interface Page {
  /** '' for the roots */
  under: string;
  offset: number;
}

interface PageState {
  data: Array<TreeResponse | undefined>;
  status: Array<{ pending: boolean; error?: string }>;
}
const pageKey = (p: Page) => `${p.under}@${p.offset}`;

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

export interface TreeData {
  /** the first answer (the first levels, or the first window) */
  base: UseQueryResult<TreeResponse>;
  nodes: TreeNodeDto[] | undefined;
  windowed: boolean;
  /** children per window */
  window: number;
  /** how many roots the tree has in all (a windowed view may hold only some) */
  rootCount: number;
  kinds: string[] | undefined;
  /** windowed and filtered: the BFF's filter answer (matches in all, and whether it is still on its way) */
  filter?: { matched: number | undefined; pending: boolean; error?: string };
  /** a sibling set's next window ('' for the roots) */
  loadMore(parentId: string): void;
  /** the children of a node expanded in a windowed view */
  loadChildren(id: string, loaded: number): void;
  pageStatus(parentId: string): { pending: boolean; error?: string };
  /** windowed: fetch every problem (and its ancestors) into the view */
  loadProblems(): void;
}

export function useTreeData(appId: string, filters: TreeFilter, forcedWindow?: number): TreeData {
  const w = forcedWindow ?? TREE_WINDOW;
  const base = useQuery(firstTreeWindowOptions(appId, w));
  const windowed = !!forcedWindow || (base.data?.summary.total ?? 0) > LARGE_TREE;
  const full = useQuery({ ...treeQueryOptions(appId), enabled: !!base.data && !windowed });
  const [pages, setPages] = useState<Page[]>([]);
  const [problems, setProblems] = useState(false);
  // another app (the same component, a new id): nothing of the last one's windows
  const [forApp, setForApp] = useState(appId);
  if (forApp !== appId) {
    setForApp(appId);
    setPages([]);
    setProblems(false);
  }
  const pageOptions = (p: Page) =>
    treeWindowQueryOptions(appId, { window: w, depth: 1, ...(p.under ? { under: p.under } : {}), offset: p.offset });
  const pageResults = useQueries({ queries: (windowed ? pages : []).map(pageOptions), combine: combinePages });
  const text = useDebounced(filters.text, 150);
  const filtering = windowed && filterActive(filters);
  const filterQ = useQuery({
    ...treeWindowQueryOptions(appId, {
      window: w,
      depth: 1,
      q: text,
      health: filters.health,
      sync: filters.sync,
      kind: filters.kind,
      limit: FILTER_LIMIT,
    }),
    enabled: filtering,
    placeholderData: keepPreviousData,
  });
  const problemsQ = useQuery({
    ...treeWindowQueryOptions(appId, { window: w, depth: 1, problems: true, limit: FILTER_LIMIT }),
    enabled: windowed && problems,
  });

  // where each sibling set's next page starts: the children the windows sent (the base, then pages), not those
  // the problems query added out of order (counting those would skip nodes)
  // the windows' nodes once each (the base, then the pages), and where each sibling set's next page starts: the
  // children the windows sent, not those the problems query added out of order (counting those would skip nodes)
  const windowNodes = useMemo(() => {
    const list: TreeNodeDto[] = [];
    const nextOffset = new Map<string, number>();
    const seen = new Set<string>();
    for (const d of [base.data, ...pageResults.data])
      for (const n of d?.nodes ?? []) {
        if (seen.has(n.id)) continue;
        seen.add(n.id);
        list.push(n);
        nextOffset.set(n.parentId ?? '', (nextOffset.get(n.parentId ?? '') ?? 0) + 1);
      }
    return { list, seen, nextOffset };
  }, [base.data, pageResults.data]);
  const { nextOffset } = windowNodes;

  const nodes = useMemo(() => {
    if (!windowed) return (full.data ?? base.data)?.nodes;
    if (filtering) return filterQ.data?.nodes;
    if (!problems || !problemsQ.data) return windowNodes.list;
    return [...windowNodes.list, ...problemsQ.data.nodes.filter((n) => !windowNodes.seen.has(n.id))];
  }, [windowed, filtering, full.data, base.data, filterQ.data, windowNodes, problems, problemsQ.data]);

  const qc = useQueryClient();
  // a page asked for again (its "try again" after an error) is fetched again
  const add = (p: Page) => {
    if (pages.some((x) => pageKey(x) === pageKey(p))) void qc.refetchQueries({ queryKey: pageOptions(p).queryKey });
    else setPages((cur) => (cur.some((x) => pageKey(x) === pageKey(p)) ? cur : [...cur, p]));
  };
  const pageStatus = useCallback(
    (parentId: string) => {
      let pending = false;
      let error: string | undefined;
      pages.forEach((p, i) => {
        if (p.under !== parentId) return;
        const s = pageResults.status[i];
        if (s?.pending) pending = true;
        if (s?.error) error = s.error;
      });
      return { pending, ...(error ? { error } : {}) };
    },
    [pages, pageResults],
  );
  return {
    base,
    nodes,
    windowed,
    window: w,
    rootCount: base.data?.topCount ?? 0,
    kinds: windowed ? base.data?.kinds : undefined,
    ...(filtering
      ? {
          filter: {
            matched: filterQ.data?.matched,
            pending: filterQ.isFetching || text !== filters.text,
            ...(filterQ.error ? { error: filterQ.error.message } : {}),
          },
        }
      : {}),
    loadMore: (parentId) => add({ under: parentId, offset: nextOffset.get(parentId) ?? 0 }),
    loadChildren: (id, loaded) => {
      if (windowed && loaded === 0 && !nextOffset.get(id)) add({ under: id, offset: 0 });
    },
    pageStatus,
    loadProblems: () => setProblems(true),
  };
}

function combinePages(rs: Array<UseQueryResult<TreeResponse>>): PageState {
  return {
    data: rs.map((r) => r.data),
    status: rs.map((r) => ({ pending: r.isPending, ...(r.error ? { error: r.error.message } : {}) })),
  };
}
