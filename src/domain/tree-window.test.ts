import { describe, expect, it } from 'vitest';
import {
  matchesFilter,
  parseCursor,
  WALK_END,
  WALK_START,
  windowTree,
  type WindowNode,
  type WindowRequest,
} from './tree-window.ts';

const KINDS = ['Deployment', 'ReplicaSet', 'Pod'];
/** a node id as the BFF makes it (refId: cluster/group/Kind/namespace/name): a cursor is one */
const idOf = (name: string, depth: number) => `c/apps/${KINDS[Math.min(depth, 2)]}/ns/${name}`;

const node = (
  name: string,
  parent: string | undefined,
  depth: number,
  extra: Partial<WindowNode> = {},
): WindowNode => ({
  id: idOf(name, depth),
  ...(parent ? { parentId: idOf(parent, depth - 1) } : {}),
  depth,
  childCount: 0,
  health: 'Healthy',
  reason: '',
  ref: { kind: KINDS[Math.min(depth, 2)] as string, namespace: 'ns', name },
  ...extra,
});

/** d0..d{n-1}, each with one ReplicaSet r{i} of `pods` Pods p{i}-{jjj}, depth-first as the BFF builds it */
function bigTree(deployments: number, pods: number, sick: string[] = []): WindowNode[] {
  const out: WindowNode[] = [];
  for (let i = 0; i < deployments; i++) {
    out.push(node(`d${i}`, undefined, 0, { childCount: 1 }));
    out.push(node(`r${i}`, `d${i}`, 1, { childCount: pods }));
    for (let j = 0; j < pods; j++) {
      const name = `p${i}-${String(j).padStart(3, '0')}`;
      out.push(node(name, `r${i}`, 2, sick.includes(name) ? { health: 'Degraded', reason: 'CrashLoopBackOff' } : {}));
    }
  }
  return out;
}

const names = (ns: readonly WindowNode[]) => ns.map((n) => n.ref.name);
/** the tree with some nodes' health changed (what a live update does between two pages) */
const withHealth = (all: WindowNode[], health: Record<string, string>) =>
  all.map((n) => (health[n.ref.name] ? { ...n, health: health[n.ref.name] as string } : n));

/**
 * A person paging one sibling set: the first window, then `after` the last page's `next` until there is none.
 * `treeAt(k)` is the tree when page k is asked for (health changes, nodes go). The pages' top-set names.
 */
function walk(treeAt: (page: number) => WindowNode[], req: Omit<WindowRequest, 'after' | 'depth'>): string[][] {
  const pages: string[][] = [];
  let after: string | undefined;
  for (let k = 0; k < 1000; k++) {
    const r = windowTree(treeAt(k), { ...req, depth: 0, ...(after !== undefined ? { after } : {}) });
    pages.push(names(r.nodes));
    if (r.next === undefined) return pages;
    after = r.next;
  }
  throw new Error('the walk did not end');
}

describe('windowTree', () => {
  it('cuts each sibling set to its window, depth-first, and says how many roots there are', () => {
    const all = bigTree(5, 4);
    const r = windowTree(all, { window: 2, depth: 2 });
    expect(names(r.nodes)).toEqual(['d0', 'r0', 'p0-000', 'p0-001', 'd1', 'r1', 'p1-000', 'p1-001']);
    expect(r.topCount).toBe(5);
    expect(r.next).toBe(idOf('d1', 0));
    expect(r.kinds).toEqual(['Deployment', 'Pod', 'ReplicaSet']);
  });

  it('pages through the roots after a cursor, says where the next page starts, and stops at the requested depth', () => {
    const all = bigTree(5, 4);
    const second = windowTree(all, { window: 2, depth: 1, after: idOf('d1', 0) });
    expect(names(second.nodes)).toEqual(['d2', 'r2', 'd3', 'r3']);
    expect(second.next).toBe(idOf('d3', 0));
    const last = windowTree(all, { window: 2, depth: 0, after: idOf('d3', 0) });
    expect(names(last.nodes)).toEqual(['d4']);
    expect(last.next).toBeUndefined();
    // a set sent whole in its first window has no cursor; nor has a page that reaches the end exactly
    expect(windowTree(all, { window: 5, depth: 0 }).next).toBeUndefined();
    expect(windowTree(all, { window: 3, depth: 0, after: idOf('d1', 0) }).next).toBeUndefined();
  });

  it('puts problems first in a window: the one crashing Pod of 1,000 is in the first page', () => {
    const all = bigTree(1, 1000, ['p0-777']);
    const r = windowTree(all, { window: 10, depth: 0, under: idOf('r0', 1) });
    expect(r.nodes[0]?.ref.name).toBe('p0-777');
    expect(r.nodes).toHaveLength(10);
    expect(r.topCount).toBe(1000);
    // the cursor is the last healthy Pod sent: the next page continues in the tree's order from there
    expect(r.next).toBe(idOf('p0-008', 2));
    const next = windowTree(all, { window: 10, depth: 0, under: idOf('r0', 1), after: r.next as string });
    expect(names(next.nodes)).toEqual(Array.from({ length: 10 }, (_, j) => `p0-${String(j + 9).padStart(3, '0')}`));
  });

  it('a first window of problems only starts the walk at the beginning of the set, in stable order', () => {
    const all = bigTree(6, 0).map((n) => (['d3', 'd4'].includes(n.ref.name) ? { ...n, health: 'Progressing' } : n));
    const first = windowTree(all, { window: 2, depth: 0 });
    expect(names(first.nodes)).toEqual(['d3', 'd4']);
    expect(first.next).toBe(WALK_START);
    expect(names(windowTree(all, { window: 2, depth: 0, after: WALK_START }).nodes)).toEqual(['d0', 'd1']);
  });

  it('a node that becomes a problem between page 1 and page 2 is not skipped (an offset into the new order skipped it)', () => {
    const all = bigTree(6, 0);
    // d2 flips to Progressing after the first page: problems first would move it before the offset
    const pages = walk((k) => (k === 0 ? all : withHealth(all, { d2: 'Progressing' })), { window: 2 });
    expect(pages).toEqual([
      ['d0', 'd1'],
      ['d2', 'd3'],
      ['d4', 'd5'],
    ]);
  });

  it('a node that stops being a problem between pages is not skipped, and is the only one sent twice', () => {
    const all = withHealth(bigTree(6, 0), { d4: 'Progressing' });
    const pages = walk((k) => (k === 0 ? all : withHealth(all, { d4: 'Healthy' })), { window: 2 });
    // page 1: d4 promoted, then the stable prefix (d0); an offset of 2 into the healed order skipped d1
    expect(pages).toEqual([['d4', 'd0'], ['d1', 'd2'], ['d3', 'd4'], ['d5']]);
  });

  it('a cursor whose node was deleted between pages still continues at the right place', () => {
    const all = bigTree(6, 2);
    const first = windowTree(all, { window: 2, depth: 1 });
    expect(first.next).toBe(idOf('d1', 0));
    // d1 and its subtree go; the page after it is still d2, d3 (never again d0, d1, nor a skip to d4)
    const gone = all.filter((n) => !['d1', 'r1', 'p1-000', 'p1-001'].includes(n.ref.name));
    const second = windowTree(gone, { window: 2, depth: 0, after: first.next as string });
    expect(names(second.nodes)).toEqual(['d2', 'd3']);
    // and in a set of children: a deleted Pod's id continues after where it stood
    const pods = bigTree(1, 30);
    const after = windowTree(
      pods.filter((n) => n.ref.name !== 'p0-009'),
      { window: 3, depth: 0, under: idOf('r0', 1), after: idOf('p0-009', 2) },
    );
    expect(names(after.nodes)).toEqual(['p0-010', 'p0-011', 'p0-012']);
  });

  it('a walk over many pages of a set whose problems change on every page covers every node', () => {
    const pods = 97;
    const all = bigTree(1, pods);
    const podNames = names(all.filter((n) => n.ref.kind === 'Pod'));
    // a deterministic churn: on page k, every Pod whose index is k mod 7 (and a few others) is a problem
    const at = (k: number) =>
      all.map((n, i) =>
        n.ref.kind === 'Pod' && (i % 7 === k % 7 || (i * k) % 11 === 3) ? { ...n, health: 'Degraded' } : n,
      );
    for (const w of [1, 5, 10, 40]) {
      const first = windowTree(at(0), { window: w, depth: 0, under: idOf('r0', 1) });
      const firstProblems = new Set(names(first.nodes.filter((n) => n.health !== 'Healthy')));
      const pages = walk(at, { window: w, under: idOf('r0', 1) });
      const sent = pages.flat();
      expect(new Set(sent)).toEqual(new Set(podNames));
      // a repeat is only a node the first window promoted as a problem, and only once
      const repeats = sent.filter((n, i) => sent.indexOf(n) !== i);
      for (const r of repeats) expect(firstProblems).toContain(r);
      expect(new Set(repeats).size).toBe(repeats.length);
      expect(pages.length).toBeLessThanOrEqual(Math.ceil(pods / w) + 1);
    }
  });

  it('pages a set in stable order even when it was not built in it, ties broken by id', () => {
    const widget = (group: string, name: string): WindowNode => ({
      id: `c/${group}/Widget/ns/${name}`,
      depth: 0,
      childCount: 0,
      health: 'Healthy',
      reason: '',
      ref: { kind: 'Widget', namespace: 'ns', name },
    });
    // kind rank first (a Deployment before any Widget), then name; the same name in two groups: by id
    const all = [widget('b.io', 'x'), widget('a.io', 'y'), node('d9', undefined, 0), widget('a.io', 'x')];
    const pages = walk(() => all, { window: 1 });
    expect(pages).toEqual([['d9'], ['x'], ['x'], ['y']]);
    const ids: string[] = [];
    let after: string | undefined;
    do {
      const r = windowTree(all, { window: 1, depth: 0, ...(after ? { after } : {}) });
      ids.push(...r.nodes.map((n) => n.id));
      after = r.next;
    } while (after);
    expect(ids).toEqual([idOf('d9', 0), 'c/a.io/Widget/ns/x', 'c/b.io/Widget/ns/x', 'c/a.io/Widget/ns/y']);
  });

  it('sends a range whole (after … through, or to the end), and says the cursor after it', () => {
    const all = bigTree(1, 30);
    const under = idOf('r0', 1);
    const range = windowTree(all, { window: 2, depth: 0, under, after: idOf('p0-009', 2), through: idOf('p0-014', 2) });
    expect(names(range.nodes)).toEqual(['p0-010', 'p0-011', 'p0-012', 'p0-013', 'p0-014']);
    expect(range.next).toBe(idOf('p0-014', 2));
    const start = windowTree(all, { window: 2, depth: 0, under, after: WALK_START, through: idOf('p0-002', 2) });
    expect(names(start.nodes)).toEqual(['p0-000', 'p0-001', 'p0-002']);
    const end = windowTree(all, { window: 2, depth: 0, under, after: idOf('p0-026', 2), through: WALK_END });
    expect(names(end.nodes)).toEqual(['p0-027', 'p0-028', 'p0-029']);
    expect(end.next).toBeUndefined();
    // `through` gone since: the range still ends where it stood
    const gone = all.filter((n) => n.ref.name !== 'p0-014');
    expect(
      names(
        windowTree(gone, { window: 2, depth: 0, under, after: idOf('p0-011', 2), through: idOf('p0-014', 2) }).nodes,
      ),
    ).toEqual(['p0-012', 'p0-013']);
  });

  it('pages asked for again as the ranges they covered (a live update) still hold every node, whatever came and went', () => {
    const under = idOf('r0', 1);
    const pods = (ns: string[], sick: string[] = []) => [
      node('d0', undefined, 0, { childCount: 1 }),
      node('r0', 'd0', 1, { childCount: ns.length }),
      ...[...ns].sort().map((n) => node(n, 'r0', 2, sick.includes(n) ? { health: 'Degraded' } : {})),
    ];
    const before = Array.from({ length: 10 }, (_, i) => `p${i}`);
    const pages = walk(() => pods(before), { window: 3, under });
    expect(pages).toEqual([['p0', 'p1', 'p2'], ['p3', 'p4', 'p5'], ['p6', 'p7', 'p8'], ['p9']]);
    // the view asks for each page again as its range: the first from the start, the last to the end
    const ranges = [
      [WALK_START, idOf('p5', 2)],
      [idOf('p5', 2), idOf('p8', 2)],
      [idOf('p8', 2), WALK_END],
    ] as const;
    // Pods replaced (p0 and p4 go; replacements sort into every range), and one turns into a problem
    const now = [...before.filter((n) => n !== 'p0' && n !== 'p4'), 'p00', 'p3a', 'p5a', 'p8a', 'p9a'];
    const tree = pods(now, ['p7']);
    const first = windowTree(tree, { window: 3, depth: 0, under });
    const held = [
      first,
      ...ranges.map(([after, through]) => windowTree(tree, { window: 3, depth: 0, under, after, through })),
    ];
    expect(new Set(held.flatMap((r) => names(r.nodes)))).toEqual(new Set(now));
  });

  it('refuses a cursor that is not a node id', () => {
    expect(() => windowTree(bigTree(2, 0), { window: 1, depth: 0, after: 'd0' })).toThrow(/not a tree cursor/);
    expect(() => windowTree(bigTree(2, 0), { window: 1, depth: 0, after: WALK_START, through: WALK_START })).toThrow(
      /not the end of a range/,
    );
  });

  it('says when the node asked for is not in the tree (never an empty answer that reads as "no children")', () => {
    const r = windowTree(bigTree(2, 2), { window: 5, depth: 1, under: idOf('gone', 1) });
    expect(r).toMatchObject({ nodes: [], missing: true });
  });

  it('answers a filter from the whole tree: matches and their ancestors, capped, with the total', () => {
    const all = bigTree(50, 40, ['p7-003', 'p42-039']);
    const r = windowTree(all, { window: 5, depth: 1, filter: { health: 'Degraded', sync: '', kind: '', text: '' } });
    expect(names(r.nodes)).toEqual(['d7', 'r7', 'p7-003', 'd42', 'r42', 'p42-039']);
    expect(r.next).toBeUndefined();
    expect(r.matched).toBe(2);
    const text = windowTree(all, {
      window: 5,
      depth: 1,
      filter: { health: '', sync: '', kind: '', text: 'p4' },
      limit: 3,
    });
    expect(text.matched).toBe(40 + 10 * 40); // p4-*, p40-* … p49-*
    expect(text.nodes.filter((n) => n.ref.kind === 'Pod')).toHaveLength(3);
    // within one subtree only
    const under = windowTree(all, { window: 5, depth: 1, under: idOf('r42', 1), problems: true });
    expect(names(under.nodes)).toEqual(['p42-039']);
    expect(under.matched).toBe(1);
  });
});

describe('parseCursor', () => {
  it('reads a node id from the right (a cluster name may hold a slash), and the walk start', () => {
    expect(parseCursor('nonprod/apps/Deployment/dev/tts-gateway')).toEqual({
      id: 'nonprod/apps/Deployment/dev/tts-gateway',
      ref: { kind: 'Deployment', namespace: 'dev', name: 'tts-gateway' },
    });
    expect(parseCursor('a/b/core/Namespace/_/dev')).toEqual({
      id: 'a/b/core/Namespace/_/dev',
      ref: { kind: 'Namespace', name: 'dev' },
    });
    expect(parseCursor(WALK_START)).toBe('start');
    for (const bad of ['d0', 'core/Pod/ns/x', 'c/core/Pod//x', 'c/core/Pod/ns/', '/core/Pod/ns/x', ''])
      expect(parseCursor(bad)).toBeUndefined();
  });
});

describe('matchesFilter', () => {
  it('matches kind, namespace, name, reason and the last writer, case-insensitively', () => {
    const n = node('web-1', 'r', 2, { reason: 'Back-off restarting', lastManager: { manager: 'kubectl-edit' } });
    const f = { health: '', sync: '', kind: '', text: '' };
    expect(matchesFilter(n, { ...f, text: 'BACK-OFF' })).toBe(true);
    expect(matchesFilter(n, { ...f, text: 'kubectl-edit' })).toBe(true);
    expect(matchesFilter(n, { ...f, text: 'nope' })).toBe(false);
    expect(matchesFilter(n, { ...f, kind: 'Pod', health: 'Degraded' })).toBe(false);
  });
});
