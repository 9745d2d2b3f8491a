import { describe, expect, it } from 'vitest';
import { matchesFilter, windowTree, type WindowNode } from './tree-window.ts';

const node = (
  id: string,
  parentId: string | undefined,
  depth: number,
  extra: Partial<WindowNode> = {},
): WindowNode => ({
  id,
  ...(parentId ? { parentId } : {}),
  depth,
  childCount: 0,
  health: 'Healthy',
  reason: '',
  ref: { kind: depth === 0 ? 'Deployment' : depth === 1 ? 'ReplicaSet' : 'Pod', namespace: 'ns', name: id },
  ...extra,
});

/** d0..d{n-1}, each with one ReplicaSet r{i} of `pods` Pods p{i}-{j}, depth-first as the BFF builds it */
function bigTree(deployments: number, pods: number, sick: string[] = []): WindowNode[] {
  const out: WindowNode[] = [];
  for (let i = 0; i < deployments; i++) {
    out.push(node(`d${i}`, undefined, 0, { childCount: 1 }));
    out.push(node(`r${i}`, `d${i}`, 1, { childCount: pods }));
    for (let j = 0; j < pods; j++) {
      const id = `p${i}-${j}`;
      out.push(node(id, `r${i}`, 2, sick.includes(id) ? { health: 'Degraded', reason: 'CrashLoopBackOff' } : {}));
    }
  }
  return out;
}

const ids = (ns: WindowNode[]) => ns.map((n) => n.id);

describe('windowTree', () => {
  it('cuts each sibling set to its window, depth-first, and says how many roots there are', () => {
    const all = bigTree(5, 4);
    const r = windowTree(all, { window: 2, depth: 2 });
    expect(ids(r.nodes)).toEqual(['d0', 'r0', 'p0-0', 'p0-1', 'd1', 'r1', 'p1-0', 'p1-1']);
    expect(r.topCount).toBe(5);
    expect(r.kinds).toEqual(['Deployment', 'Pod', 'ReplicaSet']);
  });

  it('pages through the roots, and stops at the requested depth', () => {
    const r = windowTree(bigTree(5, 4), { window: 2, depth: 0, offset: 4 });
    expect(ids(r.nodes)).toEqual(['d4']);
    expect(windowTree(bigTree(5, 4), { window: 2, depth: 1, offset: 2 }).nodes.map((n) => n.id)).toEqual([
      'd2',
      'r2',
      'd3',
      'r3',
    ]);
  });

  it('puts problems first in a window: the one crashing Pod of 1,000 is in the first page', () => {
    const all = bigTree(1, 1000, ['p0-777']);
    const r = windowTree(all, { window: 10, depth: 0, under: 'r0' });
    expect(r.nodes[0]?.id).toBe('p0-777');
    expect(r.nodes).toHaveLength(10);
    expect(r.topCount).toBe(1000);
    // the next page continues in the same order, without the problem again
    const next = windowTree(all, { window: 10, depth: 0, under: 'r0', offset: 10 });
    expect(ids(next.nodes)).toEqual(Array.from({ length: 10 }, (_, j) => `p0-${j + 9}`));
  });

  it('says when the node asked for is not in the tree (never an empty answer that reads as "no children")', () => {
    const r = windowTree(bigTree(2, 2), { window: 5, depth: 1, under: 'gone' });
    expect(r).toMatchObject({ nodes: [], missing: true });
  });

  it('answers a filter from the whole tree: matches and their ancestors, capped, with the total', () => {
    const all = bigTree(50, 40, ['p7-3', 'p42-39']);
    const r = windowTree(all, { window: 5, depth: 1, filter: { health: 'Degraded', sync: '', kind: '', text: '' } });
    expect(ids(r.nodes)).toEqual(['d7', 'r7', 'p7-3', 'd42', 'r42', 'p42-39']);
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
    const under = windowTree(all, { window: 5, depth: 1, under: 'r42', problems: true });
    expect(ids(under.nodes)).toEqual(['p42-39']);
    expect(under.matched).toBe(1);
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
