// Where the resource tree's nodes come from. A tree of up to LARGE_TREE objects is fetched whole (first its
// first two levels, for a fast first paint). A larger one (issue 27: 100,000 objects) is never held whole in
// the browser: the view holds windows of it (200 children per sibling set, problems first), loads a node's
// children when it is expanded and the next 200 on "Show more", and asks the BFF to filter the whole tree.
// The browser's memory then grows with what a person opened, not with the app.
// "Show more" follows the BFF's keyset cursor (domain/tree-window.ts): each sibling set keeps the `next` of the
// last page received, and its next page is the 200 after it in the tree's stable order, whatever changed health
// since. A page may repeat a node an earlier window sent as a problem: the first copy is kept, nothing is skipped.
// A page's first answer fixes the range it covers (the first page of a set from the start of it, the last to the
// end when it reached the end); a live update asks for each page again as that range, so the pages stay
// contiguous while objects come and go (asked for again by cursor and window, a page a new object fell into
// would push its last node out of every page).
import { keepPreviousData, useQueries, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { TreeNodeDto, TreeResponse } from '../../../../api/schemas.ts';
import { filterActive, WALK_END, WALK_START, type TreeFilter } from '../../../../domain/tree-window.ts';
import { mergeWindows } from '../lib/window-pages.ts';
import {
  fetchTreeWindow,
  firstTreeWindowOptions,
  TREE_WINDOW,
  treeQueryOptions,
  treeWindowQueryOptions,
} from './tree-queries.ts';

/** above this many objects the tree is windowed */
export const LARGE_TREE = 5000;
/** at most this many matches of a filter (the total is said) */
export const FILTER_LIMIT = 1000;

interface Page {
  /** '' for the roots */
  under: string;
  /** the cursor the page starts after (the `next` of the set's page before); none: the set's first window */
  after?: string;
  /** the set's first page after its first window: its range starts at the start of the set */
  fromStart?: true;
}

interface PageState {
  data: Array<TreeResponse | undefined>;
  status: Array<{ pending: boolean; error?: string }>;
}
const pageKey = (p: Page) => `${p.under}@${p.after ?? ''}`;

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
  /**
   * whether a sibling set ('' for the roots) has more on the BFF: true while its walk has a cursor, false once it
   * reached the end, undefined while no window of it came (the view then goes by the counts)
   */
  hasMore(parentId: string): boolean | undefined;
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
  // each later page's range, fixed by its first answer (by app, window and page)
  const ranges = useRef(new Map<string, { after: string; through: string }>());
  const pageOptions = (p: Page) => {
    const params = { window: w, depth: 1, ...(p.under ? { under: p.under } : {}) };
    const first = treeWindowQueryOptions(appId, { ...params, ...(p.after ? { after: p.after } : {}) });
    const { after } = p;
    // a first window stays one (problems first); a later page is asked for again as the range it covered
    if (!after) return first;
    const id = `${appId}\n${w}\n${pageKey(p)}`;
    return {
      ...first,
      queryFn: async ({ signal }: { signal: AbortSignal }) => {
        const range = ranges.current.get(id);
        const d = await fetchTreeWindow(appId, { ...params, ...(range ?? { after }) }, signal);
        if (!range) ranges.current.set(id, { after: p.fromStart ? WALK_START : after, through: d.next ?? WALK_END });
        return d;
      },
    };
  };
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

  // the windows' nodes once each (the base, then the pages, the first copy kept), and where each sibling set's
  // next page starts: the cursor of the last window of it received, never the problems query's nodes
  const windowNodes = useMemo(
    () =>
      mergeWindows(
        base.data,
        pages.map((p, i) => ({ under: p.under, data: pageResults.data[i] })),
      ),
    [base.data, pages, pageResults.data],
  );
  const { next } = windowNodes;

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
  // a set's last page that brought only repeats (nodes an earlier window sent as problems) and has a cursor: its
  // next page is asked for at once, so that "Show more" shows more (each step moves on in the set: it ends). Set
  // while rendering, as the app change above (once: the page is then in the list)
  const follow = windowed ? repeatsOnly(pages, pageResults.data, windowNodes.fresh) : [];
  if (follow.length && forApp === appId) setPages([...pages, ...follow]);
  const hasMore = useCallback(
    (parentId: string) => {
      const c = next.get(parentId);
      return c === undefined ? undefined : c !== null;
    },
    [next],
  );
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
    hasMore,
    loadMore: (parentId) => {
      const after = next.get(parentId);
      // no window of the set yet: its first; the walk at its end: nothing
      if (after === undefined) add({ under: parentId });
      else if (after !== null) add(laterPage(pages, parentId, after));
    },
    loadChildren: (id, loaded) => {
      if (windowed && loaded === 0 && !next.has(id) && !pages.some((p) => p.under === id)) add({ under: id });
    },
    pageStatus,
    loadProblems: () => setProblems(true),
  };
}

/** a set's page after `after`; the first after its first window covers, once answered, from the start of the set */
function laterPage(pages: Page[], under: string, after: string): Page {
  return { under, after, ...(pages.some((p) => p.under === under && p.after) ? {} : { fromStart: true as const }) };
}

/** the next page of each set whose last page brought only repeats and has a cursor, if not asked for yet */
function repeatsOnly(pages: Page[], data: Array<TreeResponse | undefined>, fresh: number[]): Page[] {
  const last = new Map<string, number>();
  pages.forEach((p, i) => last.set(p.under, i));
  const out: Page[] = [];
  for (const [under, i] of last) {
    const after = data[i]?.next;
    if (!after || fresh[i] !== 0) continue;
    const p = laterPage(pages, under, after);
    if (!pages.some((x) => pageKey(x) === pageKey(p))) out.push(p);
  }
  return out;
}

function combinePages(rs: Array<UseQueryResult<TreeResponse>>): PageState {
  return {
    data: rs.map((r) => r.data),
    status: rs.map((r) => ({ pending: r.isPending, ...(r.error ? { error: r.error.message } : {}) })),
  };
}
