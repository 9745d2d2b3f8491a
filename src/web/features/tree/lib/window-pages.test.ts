// The view's side of the keyset walk (domain/tree-window.ts): answers from the BFF's own window function, put
// together as use-tree-data does, and "Show more" asked for after each set's cursor. Health changes between
// pages; the view still ends up holding every node once.
import { describe, expect, it } from 'vitest';
import type { TreeNodeDto, TreeResponse } from '../../../../api/schemas.ts';
import { windowTree, type WindowRequest } from '../../../../domain/tree-window.ts';
import { mergeWindows } from './window-pages.ts';

const KINDS = ['Deployment', 'ReplicaSet', 'Pod'] as const;
const idOf = (name: string, depth: number) => `c/apps/${KINDS[depth]}/dev/${name}`;
const node = (name: string, depth: number, parent?: string, childCount = 0): TreeNodeDto => ({
  id: idOf(name, depth),
  ref: { cluster: 'c', group: 'apps', version: 'v1', kind: KINDS[depth] as string, namespace: 'dev', name },
  ...(parent ? { parentId: idOf(parent, depth - 1) } : {}),
  depth,
  childCount,
  managed: depth === 0,
  health: 'Healthy',
  reason: '',
});

/** `roots` Deployments d0.., each with `rs` ReplicaSets r{i}-{j}, depth-first in the tree's order */
function tree(roots: number, rs: number): TreeNodeDto[] {
  const out: TreeNodeDto[] = [];
  for (let i = 0; i < roots; i++) {
    out.push(node(`d${i}`, 0, undefined, rs));
    for (let j = 0; j < rs; j++) out.push(node(`r${i}-${j}`, 1, `d${i}`));
  }
  return out;
}
const sick = (all: TreeNodeDto[], names: string[]): TreeNodeDto[] =>
  all.map((n) => (names.includes(n.ref.name) ? { ...n, health: 'Progressing' as const } : n));

/** what the BFF answers (routes.ts: windowTree, then the envelope's `topCount` and `next`) */
const answer = (all: TreeNodeDto[], req: WindowRequest): TreeResponse => {
  const r = windowTree(all, req);
  return { nodes: r.nodes, topCount: r.topCount, ...(r.next ? { next: r.next } : {}) } as unknown as TreeResponse;
};

/** the view: the base window (depth 1), then "Show more" on a set until its walk ends, the tree changing between */
function showAll(treeAt: (k: number) => TreeNodeDto[], w: number, set: string) {
  let k = 0;
  const base = answer(treeAt(k++), { window: w, depth: 1 });
  const pages: Array<{ under: string; data: TreeResponse }> = [];
  for (;;) {
    const cursor = mergeWindows(base, pages).next.get(set);
    if (cursor === null) break;
    if (k > 100) throw new Error('the walk did not end');
    const req = { window: w, depth: 1, ...(set ? { under: set } : {}), ...(cursor ? { after: cursor } : {}) };
    pages.push({ under: set, data: answer(treeAt(k++), req) });
  }
  return { base, pages, merged: mergeWindows(base, pages) };
}
const namesUnder = (list: TreeNodeDto[], parent: string | undefined) =>
  list.filter((n) => n.parentId === parent).map((n) => n.ref.name);

describe('mergeWindows', () => {
  it('holds every root once after "Show more" to the end, though roots turn into problems and back between pages', () => {
    const all = tree(9, 2);
    // page k: a different root is Progressing (the HPA flipping), d7 on the first window only
    const at = (k: number) => sick(all, k === 0 ? ['d7'] : [`d${(k * 4) % 9}`]);
    const { base, pages, merged } = showAll(at, 2, '');
    expect(base.next).toBe(idOf('d0', 0));
    expect(namesUnder(merged.list, undefined).sort()).toEqual(namesUnder(all, undefined).sort());
    // only d7, the first window's problem, came twice; the view kept one copy and the page that sent it again
    // still brought a node it did not hold
    const sent = [base, ...pages.map((p) => p.data)].flatMap((d) => namesUnder(d.nodes, undefined));
    expect(sent.filter((n, i) => sent.indexOf(n) !== i)).toEqual(['d7']);
    expect(merged.fresh.every((f) => f > 0)).toBe(true);
    expect(merged.next.get('')).toBeNull();
  });

  it("a set below the roots continues from its first window's cursor, sent with its parent", () => {
    const all = tree(2, 7);
    // d1's ReplicaSets came as a first window in the base (r1-4 a problem then); r1-4 heals, r1-1 turns
    const at = (k: number) => (k === 0 ? sick(all, ['r1-4']) : sick(all, ['r1-1']));
    const { base, pages, merged } = showAll(at, 3, idOf('d1', 0));
    expect(namesUnder(base.nodes, idOf('d1', 0))).toEqual(['r1-4', 'r1-0', 'r1-1']);
    expect(pages[0]?.data.nodes.map((n) => n.ref.name)).toEqual(['r1-2', 'r1-3', 'r1-4']);
    expect(namesUnder(merged.list, idOf('d1', 0))).toEqual(['r1-4', 'r1-0', 'r1-1', 'r1-2', 'r1-3', 'r1-5', 'r1-6']);
    // d0's set, never paged, keeps the cursor of its own first window
    expect(merged.next.get(idOf('d0', 0))).toBe(idOf('r0-2', 1));
  });

  it("a root sent again does not move its children's walk back, and a page of repeats only is said (fresh 0)", () => {
    const all = sick(tree(3, 4), ['d2']);
    const base = answer(all, { window: 2, depth: 1 });
    // d2 promoted: the roots' cursor is d0; d2's children came with it, and were paged on
    expect(base.next).toBe(idOf('d0', 0));
    const d2 = idOf('d2', 0);
    const kids = answer(all, { window: 2, depth: 1, under: d2, after: idOf('r2-1', 1) });
    const roots = answer(all, { window: 2, depth: 1, after: idOf('d0', 0) });
    expect(roots.nodes.map((n) => n.ref.name)).toEqual(['d1', 'r1-0', 'r1-1', 'd2', 'r2-0', 'r2-1']);
    const merged = mergeWindows(base, [
      { under: d2, data: kids },
      { under: '', data: roots },
    ]);
    expect(merged.next.get(d2)).toBeNull();
    expect(merged.next.get('')).toBeNull();
    expect(merged.fresh).toEqual([2, 1]);
    // the page of the roots again, now only repeats; a page on its way leaves the cursor before it
    const again = mergeWindows(base, [
      { under: '', data: roots },
      { under: '', data: roots },
      { under: '', data: undefined },
    ]);
    expect(again.fresh).toEqual([1, 0, 0]);
    expect(again.next.get('')).toBeNull();
    expect(mergeWindows(base, [{ under: '', data: undefined }]).next.get('')).toBe(idOf('d0', 0));
  });

  it('a first window of problems only: the walk starts at the beginning; a set sent whole has no cursor', () => {
    const all = sick(tree(4, 1), ['d2', 'd3']);
    const { base, pages, merged } = showAll(() => all, 2, '');
    expect(base.next).toBe('^');
    expect(pages.map((p) => p.data.nodes.filter((n) => !n.parentId).map((n) => n.ref.name))).toEqual([
      ['d0', 'd1'],
      ['d2', 'd3'],
    ]);
    expect(merged.fresh).toEqual([2, 0]);
    expect(merged.next.get(idOf('d0', 0))).toBeNull();
  });
});
