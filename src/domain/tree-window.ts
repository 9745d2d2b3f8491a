// A window onto a very large resource tree (issue 27: one app of 100,000 objects). The BFF builds the whole
// tree from its caches, and sends only what the view asks for:
//   - a window of each sibling set (problems first, so a crashing Pod among 48,000 is in the first window),
//   - the subtree under one node (`under`), a page of its children at a time (`after`: a keyset cursor),
//   - or every node that matches a filter, with its ancestors (capped; the total is said).
// Pure: the SPA's filter (`matchesFilter`) is the same function, so the BFF and the browser agree on a match.
//
// Paging a sibling set is a keyset walk over the tree's stable order (`compareRefs`: kind rank, kind, namespace,
// name; then the id), never an offset into the problems-first order: health changes while a person pages (an
// HPA flips between Healthy and Progressing), and an offset into an order that moved repeats one node and skips
// another. The contract:
//   - the first window of a set is problems first; its cursor (`next`) is the last NON-problem node it holds:
//     everything before that node in stable order was sent (a problem promoted, or the stable prefix). A first
//     window of problems only has the cursor WALK_START (the walk starts at the beginning);
//   - a later page (`after`) is the next `window` nodes of the set strictly after the cursor in stable order,
//     whatever their health; its cursor is its last node. The node a cursor names may be gone: the cursor is
//     compared by its (kind, namespace, name, id), parsed from the id, never looked up;
//   - no cursor: the walk reached the end of the set;
//   - a later page may repeat a node the first window promoted as a problem: the client keeps one copy per id.
//     No node that is in the set throughout the walk is ever skipped, whatever changes health between pages;
//   - a range (`after` and `through`): every node after `after` up to `through` included (WALK_END: to the end),
//     however many there are now. A page the view holds is asked for again (a live update) as the range it
//     covered, the first from WALK_START: its pages stay contiguous though objects come and go between them.

import { compareRefs } from './tree.ts';

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
  /**
   * a later page of the top set: the nodes strictly after this cursor in stable order (a node id, or
   * WALK_START); none: the set's first window (problems first). Check it with `parseCursor` first.
   */
  after?: string;
  /**
   * with `after`: a range, every node up to this one included (a node id, or WALK_END), however many (`window`
   * does not cap it)
   */
  through?: string;
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
  /** windows (no filter): where the top set's next page starts (`after`); none: the walk reached its end */
  next?: string;
  /** with a filter or `problems`: how many nodes matched in all (only `limit` of them are sent) */
  matched?: number;
  /** the kinds in the whole tree (the kind filter's choices; the window may hold only some) */
  kinds: string[];
  /** `under` is not in the tree (gone since the view loaded, or never there) */
  missing?: true;
}

/** The cursor of a walk that starts at the beginning of a set (a first window that held only problems). */
export const WALK_START = '^';
/** The end of a range that runs to the end of a set (`through`). */
export const WALK_END = '$';

/** A cursor parsed: where it stands in the tree's stable order (the node it names may be gone). */
export interface Cursor {
  id: string;
  ref: { kind: string; namespace?: string; name: string };
}

/**
 * A cursor from `?after=`: WALK_START, or a node id (`refId`: cluster/group/Kind/namespace-or-_/name, read from
 * the right, since the name, namespace, kind and group hold no `/`). Undefined: not a cursor.
 */
export function parseCursor(s: string): Cursor | 'start' | undefined {
  if (s === WALK_START) return 'start';
  const parts = s.split('/');
  if (parts.length < 5 || parts.some((p) => p === '')) return undefined;
  const [kind, ns, name] = parts.slice(-3) as [string, string, string];
  return { id: s, ref: { kind, ...(ns === '_' ? {} : { namespace: ns }), name } };
}

/** The end of a range from `?through=`: WALK_END, or a node id (never WALK_START). Undefined: not one. */
export function parseThrough(s: string): Cursor | 'end' | undefined {
  if (s === WALK_END) return 'end';
  const c = parseCursor(s);
  return c === 'start' ? undefined : c;
}

/** The tree's stable order (`compareRefs`), tie-broken by id: a total order, so a cursor has one place. */
const stableCompare = (a: Cursor, b: Cursor) => compareRefs(a.ref, b.ref) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A sibling set in stable order (it usually is already, as the tree is built: checked, sorted only if not). */
function stableOrder<N extends WindowNode>(ids: string[], byId: Map<string, N>): string[] {
  const at = (id: string) => byId.get(id) as N;
  for (let i = 1; i < ids.length; i++)
    if (stableCompare(at(ids[i - 1] as string), at(ids[i] as string)) > 0)
      return [...ids].sort((a, b) => stableCompare(at(a), at(b)));
  return ids;
}

/** Problems first, each group in stable order (`ids` is). */
function windowOrder<N extends WindowNode>(ids: string[], byId: Map<string, N>): string[] {
  const first: string[] = [];
  const rest: string[] = [];
  for (const id of ids) (isProblemNode(byId.get(id) as N) ? first : rest).push(id);
  return first.length ? [...first, ...rest] : ids;
}

/**
 * The cursor after a set's first window: `sent` is that window in the order it was sent (problems first, then
 * the stable prefix), `total` how many the set has. None when all of it was sent; the last non-problem node
 * sent, or WALK_START when the window held only problems. The BFF says it of the top set (`next`); the SPA
 * reads it of the sets a response holds below the top set (each one a first window) with the same function.
 */
export function firstWindowNext(sent: readonly Pick<WindowNode, 'id' | 'health' | 'sync'>[], total: number) {
  if (sent.length >= total) return undefined;
  for (let i = sent.length - 1; i >= 0; i--)
    if (!isProblemNode(sent[i] as WindowNode)) return (sent[i] as WindowNode).id;
  return WALK_START;
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
  // depth-first, each sibling set below the top cut to its first window
  const visit = (id: string, level: number) => {
    const n = byId.get(id);
    if (!n) return;
    out.push(n);
    if (level >= req.depth) return;
    const kids = children.get(id);
    if (!kids) return;
    for (const c of windowOrder(stableOrder(kids, byId), byId).slice(0, w)) visit(c, level + 1);
  };
  const set = stableOrder(top, byId);
  let page: string[];
  let next: string | undefined;
  if (req.after === undefined) {
    page = windowOrder(set, byId).slice(0, w);
    next = firstWindowNext(
      page.map((id) => byId.get(id) as N),
      set.length,
    );
  } else {
    const cursor = parseCursor(req.after);
    const end = req.through === undefined ? undefined : parseThrough(req.through);
    if (!cursor) throw new Error(`not a tree cursor: ${req.after}`);
    if (req.through !== undefined && !end) throw new Error(`not the end of a range: ${req.through}`);
    // the first node strictly after the cursor (a binary search: the set is in stable order)
    const firstAfter = (from: number, c: Cursor) => {
      let lo = from;
      for (let hi = set.length; lo < hi;) {
        const mid = (lo + hi) >>> 1;
        if (stableCompare(byId.get(set[mid] as string) as N, c) <= 0) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const lo = cursor === 'start' ? 0 : firstAfter(0, cursor);
    if (end === undefined) {
      page = set.slice(lo, lo + w);
      next = lo + w < set.length ? page[page.length - 1] : undefined;
    } else {
      // a range: up to `through` included, or to the end of the set
      const hi = end === 'end' ? set.length : firstAfter(lo, end);
      page = set.slice(lo, hi);
      next = hi < set.length ? req.through : undefined;
    }
  }
  for (const id of page) visit(id, 0);
  return { nodes: out, topCount: top.length, ...(next !== undefined ? { next } : {}), kinds: kindList };
}
