// A window onto a very large resource tree (issue 27: one app of 100,000 objects). The BFF builds the whole
// tree from its caches, and sends only what the view asks for:
//   - a window of each sibling set (problems first, so a crashing Pod among 48,000 is in the first window),
//   - the subtree under one node (`under`), a page of its children at a time (`offset`),
//   - or every node that matches a filter, with its ancestors (capped; the total is said).
// Pure: the SPA's filter (`matchesFilter`) is the same function, so the BFF and the browser agree on a match.

export interface WindowNode {
  id: string;
  parentId?: string;
  depth: number;
  childCount: number;
  health: string;
  sync?: string;
  reason: string;
  ref: { kind: string; namespace?: string; name: string };
  lastManager?: { manager: string };
}

export interface TreeFilter {
  health: string;
  sync: string;
  kind: string;
  text: string;
}

export const filterActive = (f: TreeFilter) => !!(f.health || f.sync || f.kind || f.text);

export function matchesFilter(n: WindowNode, f: TreeFilter): boolean {
  if (f.health && n.health !== f.health) return false;
  if (f.sync && n.sync !== f.sync) return false;
  if (f.kind && n.ref.kind !== f.kind) return false;
  if (f.text) {
    const t = f.text.toLowerCase();
    const hay = `${n.ref.kind} ${n.ref.namespace ?? ''} ${n.ref.name} ${n.reason} ${n.lastManager?.manager ?? ''}`;
    if (!hay.toLowerCase().includes(t)) return false;
  }
  return true;
}

/** unhealthy or not in sync: what "expand all problems" opens, and what a window shows first */
export const isProblemNode = (n: Pick<WindowNode, 'health' | 'sync'>) =>
  n.health !== 'Healthy' || (n.sync !== undefined && n.sync !== 'Synced');

export interface WindowRequest {
  /** children per sibling set (and per page of `under`'s children) */
  window: number;
  /** levels below the window's top set (0: the top set only) */
  depth: number;
  /** the node whose children are the top set; none: the tree's roots */
  under?: string;
  /** the first of the top set's children to send (a page) */
  offset?: number;
  /** a filter: the matching nodes (at most `limit`) and their ancestors, instead of windows */
  filter?: TreeFilter;
  /** only the problem nodes (at most `limit`) and their ancestors */
  problems?: boolean;
  limit?: number;
}

export interface WindowResult<N> {
  nodes: N[];
  /** how many children the top set has in all (the roots, or `under`'s children) */
  topCount: number;
  /** with a filter or `problems`: how many nodes matched in all (only `limit` of them are sent) */
  matched?: number;
  /** the kinds in the whole tree (the kind filter's choices; the window may hold only some) */
  kinds: string[];
  /** `under` is not in the tree (gone since the view loaded, or never there) */
  missing?: true;
}

/** Problems first, each group in the tree's own order (kind, namespace, name). Stable. */
function windowOrder<N extends WindowNode>(ids: string[], byId: Map<string, N>): string[] {
  const first: string[] = [];
  const rest: string[] = [];
  for (const id of ids) (byId.get(id) && isProblemNode(byId.get(id) as N) ? first : rest).push(id);
  return first.length ? [...first, ...rest] : ids;
}

/**
 * Cuts a whole tree (depth-first order, as the BFF builds it) to what one view asks for. The result keeps
 * depth-first order, so a parent always comes before its children.
 */
export function windowTree<N extends WindowNode>(all: readonly N[], req: WindowRequest): WindowResult<N> {
  const byId = new Map<string, N>();
  const children = new Map<string, string[]>();
  const roots: string[] = [];
  const kinds = new Set<string>();
  for (const n of all) {
    byId.set(n.id, n);
    kinds.add(n.ref.kind);
    if (n.parentId && byId.has(n.parentId)) {
      let c = children.get(n.parentId);
      if (!c) children.set(n.parentId, (c = []));
      c.push(n.id);
    } else roots.push(n.id);
  }
  const kindList = [...kinds].sort();
  if (req.under !== undefined && !byId.has(req.under))
    return { nodes: [], topCount: 0, kinds: kindList, missing: true };
  const top = req.under !== undefined ? (children.get(req.under) ?? []) : roots;
  const limit = Math.max(1, req.limit ?? 1000);

  if (req.problems || (req.filter && filterActive(req.filter))) {
    // the scope: the whole tree, or the subtree under `under`
    const inScope = (n: N): boolean => {
      if (req.under === undefined) return true;
      for (let p = n.parentId; p; p = byId.get(p)?.parentId) if (p === req.under) return true;
      return false;
    };
    const hit = (n: N) => (req.problems ? isProblemNode(n) : matchesFilter(n, req.filter as TreeFilter));
    const keep = new Set<string>();
    let matched = 0;
    for (const n of all) {
      if (!hit(n) || !inScope(n)) continue;
      matched++;
      if (matched > limit) continue;
      keep.add(n.id);
      for (let p = n.parentId; p && !keep.has(p) && p !== req.under; p = byId.get(p)?.parentId) keep.add(p);
    }
    return { nodes: all.filter((n) => keep.has(n.id)), topCount: top.length, matched, kinds: kindList };
  }

  const w = Math.max(1, req.window);
  const out: N[] = [];
  const offset = Math.max(0, req.offset ?? 0);
  // depth-first, each sibling set cut to its window
  const visit = (id: string, level: number) => {
    const n = byId.get(id);
    if (!n) return;
    out.push(n);
    if (level >= req.depth) return;
    const kids = children.get(id);
    if (!kids) return;
    for (const c of windowOrder(kids, byId).slice(0, w)) visit(c, level + 1);
  };
  for (const id of windowOrder(top, byId).slice(offset, offset + w)) visit(id, 0);
  return { nodes: out, topCount: top.length, kinds: kindList };
}
