// Pure view model of the resource tree: which rows are visible given the
// expansion set and filters, and which nodes to expand to show every problem.
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { filterActive, isProblemNode, matchesFilter, type TreeFilter } from '../../../../domain/tree-window.ts';

export type TreeFilters = TreeFilter;

export interface TreeIndex {
  byId: Map<string, TreeNodeDto>;
  children: Map<string, string[]>;
  roots: string[];
}

export function indexTree(nodes: TreeNodeDto[]): TreeIndex {
  const byId = new Map<string, TreeNodeDto>();
  const children = new Map<string, string[]>();
  const roots: string[] = [];
  for (const n of nodes) {
    byId.set(n.id, n);
    if (n.parentId) {
      let c = children.get(n.parentId);
      if (!c) children.set(n.parentId, (c = []));
      c.push(n.id);
    } else roots.push(n.id);
  }
  return { byId, children, roots };
}

export const filtersActive = filterActive;

/**
 * A windowed tree's placeholder after the children it holds: the rest of that sibling set is on the BFF
 * ("Show more": its walk has a cursor), or the children of an expanded node are still on their way.
 */
export interface MoreRow {
  more: true;
  id: string;
  /** '' for the roots */
  parentId: string;
  depth: number;
  loaded: number;
  total: number;
}
export type TreeRow = TreeNodeDto | MoreRow;
export const isMoreRow = (r: TreeRow | undefined): r is MoreRow => !!r && 'more' in r;

/**
 * A windowed view's sibling sets: how many roots there are, and whether a set ('' for the roots) has more on the
 * BFF (use-tree-data's `hasMore`: its walk has a cursor); undefined while no window of it came, and then a set
 * has more when it holds fewer nodes than its count.
 */
export interface WindowedSets {
  rootCount: number;
  hasMore?(parentId: string): boolean | undefined;
}

/**
 * Visible rows in depth-first order. With filters active, a node is shown when
 * it or a descendant matches, and its ancestors are shown (expanded) for context.
 */
export function visibleRows(idx: TreeIndex, expanded: ReadonlySet<string>, f: TreeFilters): TreeNodeDto[];
/** With `windowed` (and no filter): a MoreRow after each sibling set the view holds only part of. */
export function visibleRows(
  idx: TreeIndex,
  expanded: ReadonlySet<string>,
  f: TreeFilters,
  windowed: WindowedSets,
): TreeRow[];
export function visibleRows(
  idx: TreeIndex,
  expanded: ReadonlySet<string>,
  f: TreeFilters,
  windowed?: WindowedSets,
): TreeRow[] {
  const out: TreeRow[] = [];
  const active = filtersActive(f);
  const keep = new Map<string, boolean>();
  const subtreeMatches = (id: string): boolean => {
    const cached = keep.get(id);
    if (cached !== undefined) return cached;
    const n = idx.byId.get(id);
    let m = !!n && matchesFilter(n, f);
    for (const c of idx.children.get(id) ?? []) if (subtreeMatches(c)) m = true;
    keep.set(id, m);
    return m;
  };
  const more = windowed && !active;
  // iterative DFS to survive deep or very wide trees; a MoreRow is pushed before the children it follows
  const stack: Array<string | MoreRow> = [...idx.roots].reverse();
  if (more && (windowed.hasMore?.('') ?? idx.roots.length < windowed.rootCount))
    stack.unshift({
      more: true,
      id: 'more:',
      parentId: '',
      depth: 0,
      loaded: idx.roots.length,
      total: windowed.rootCount,
    });
  while (stack.length) {
    const id = stack.pop() as string | MoreRow;
    if (typeof id !== 'string') {
      out.push(id);
      continue;
    }
    const n = idx.byId.get(id);
    if (!n) continue;
    if (active && !subtreeMatches(id)) continue;
    out.push(n);
    const kids = idx.children.get(id) ?? [];
    if (more && expanded.has(id) && (windowed.hasMore?.(id) ?? kids.length < n.childCount))
      stack.push({
        more: true,
        id: `more:${id}`,
        parentId: id,
        depth: n.depth + 1,
        loaded: kids.length,
        total: n.childCount,
      });
    if (!kids.length) continue;
    const open = active ? kids.some((c) => subtreeMatches(c)) : expanded.has(id);
    if (open) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i] as string);
  }
  return out;
}

/** Ids to expand so that every unhealthy or unsynced node is visible. */
export function problemPaths(idx: TreeIndex): Set<string> {
  const open = new Set<string>();
  for (const n of idx.byId.values()) {
    if (!isProblemNode(n)) continue;
    let p = n.parentId;
    while (p && !open.has(p)) {
      open.add(p);
      p = idx.byId.get(p)?.parentId;
    }
  }
  return open;
}

export function allExpandable(idx: TreeIndex): Set<string> {
  return new Set(idx.children.keys());
}

/** "240 Pods: 238 Running, 2 CrashLoopBackOff": a one-line summary of same-kind siblings. */
export function groupLabel(nodes: TreeNodeDto[]): string {
  const kind = nodes[0]?.ref.kind ?? '';
  const counts = new Map<string, number>();
  for (const n of nodes) {
    const key = n.health === 'Healthy' ? (kind === 'Pod' ? 'Running' : 'Healthy') : firstWord(n.reason) || n.health;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const parts = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} ${k}`);
  return `${nodes.length} ${kind}${nodes.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

function firstWord(reason: string): string {
  const m =
    /(CrashLoopBackOff|ImagePullBackOff|ErrImagePull|OOMKilled|ProgressDeadlineExceeded|Pending|terminated|failed|not ready)/i.exec(
      reason,
    );
  return m?.[1] ?? '';
}

export function kindsOf(nodes: TreeNodeDto[]): string[] {
  return [...new Set(nodes.map((n) => n.ref.kind))].sort();
}
