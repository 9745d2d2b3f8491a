// A windowed tree's answers put together (api/use-tree-data.ts): the base window, then each page, one copy of a
// node (the first), and where each sibling set's next page starts. Pages follow the BFF's keyset cursor
// (domain/tree-window.ts): a set's cursor is the `next` of the last page of it received; a set below a page's
// top set came as its first window (problems first), and its cursor follows the same rule (`firstWindowNext`).
import type { TreeNodeDto, TreeResponse } from '../../../../api/schemas.ts';
import { firstWindowNext } from '../../../../domain/tree-window.ts';

export interface MergedWindows {
  /** the windows' nodes, each once (the first copy: a later page may repeat a node sent as a problem) */
  list: TreeNodeDto[];
  seen: Set<string>;
  /**
   * per sibling set ('' for the roots): the cursor its next page starts after; null: its walk reached the end;
   * no entry: no window of it came yet
   */
  next: Map<string, string | null>;
  /** per page: how many nodes of its own set it brought that no answer before it had (0: repeats only) */
  fresh: number[];
}

/** `pages` in the order they were asked for; `under` is the page's top set ('' for the roots), `data` its answer. */
export function mergeWindows(
  base: TreeResponse | undefined,
  pages: ReadonlyArray<{ under: string; data: TreeResponse | undefined }>,
): MergedWindows {
  const list: TreeNodeDto[] = [];
  const seen = new Set<string>();
  const next = new Map<string, string | null>();
  const take = (d: TreeResponse | undefined, under: string) => {
    let added = 0;
    const byId = new Map<string, TreeNodeDto>();
    const below = new Map<string, TreeNodeDto[]>();
    for (const n of d?.nodes ?? []) {
      const parent = n.parentId ?? '';
      byId.set(n.id, n);
      if (parent !== under) {
        let kids = below.get(parent);
        if (!kids) below.set(parent, (kids = []));
        kids.push(n);
      }
      if (seen.has(n.id)) continue;
      seen.add(n.id);
      list.push(n);
      if (parent === under) added++;
    }
    if (!d) return added;
    // the page's own set: the BFF's cursor (a page still on its way leaves the one before it)
    next.set(under, d.next ?? null);
    // a set below it: its first window, in the order sent; kept if a window of that set came before (a root sent
    // again brings its children's first window again: that must not move the set's walk back)
    for (const [parent, kids] of below) {
      const total = byId.get(parent)?.childCount;
      if (total !== undefined && !next.has(parent)) next.set(parent, firstWindowNext(kids, total) ?? null);
    }
    return added;
  };
  take(base, '');
  const fresh = pages.map((p) => take(p.data, p.under));
  return { list, seen, next, fresh };
}
