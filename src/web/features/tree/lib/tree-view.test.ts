import { describe, expect, it } from 'vitest';
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { layoutGraph } from './graph-layout.ts';
import { groupLabel, indexTree, isMoreRow, problemPaths, visibleRows } from './tree-view.ts';

const n = (
  id: string,
  kind: string,
  parentId?: string,
  health: TreeNodeDto['health'] = 'Healthy',
  reason = '',
): TreeNodeDto => ({
  id,
  ref: { cluster: 'c', group: '', version: 'v1', kind, namespace: 'dev', name: id },
  ...(parentId ? { parentId } : {}),
  depth: parentId ? parentId.split('/').length : 0,
  childCount: 0,
  managed: !parentId,
  health,
  reason,
});

const nodes = [
  n('d', 'Deployment'),
  n('d/rs', 'ReplicaSet', 'd'),
  n('d/rs/p1', 'Pod', 'd/rs'),
  n('d/rs/p2', 'Pod', 'd/rs', 'Degraded', 'container render: CrashLoopBackOff'),
  n('svc', 'Service'),
];
const none = { health: '', sync: '', kind: '', text: '' };

describe('tree view model', () => {
  const idx = indexTree(nodes);
  it('shows only roots when nothing is expanded', () => {
    expect(visibleRows(idx, new Set(), none).map((r) => r.id)).toEqual(['d', 'svc']);
  });
  it('shows children of expanded nodes in order', () => {
    expect(visibleRows(idx, new Set(['d', 'd/rs']), none).map((r) => r.id)).toEqual([
      'd',
      'd/rs',
      'd/rs/p1',
      'd/rs/p2',
      'svc',
    ]);
  });
  it('expands exactly the paths to problems', () => {
    expect([...problemPaths(idx)].sort()).toEqual(['d', 'd/rs']);
  });
  it('filters keep matching nodes with their ancestors', () => {
    expect(visibleRows(idx, new Set(), { ...none, health: 'Degraded' }).map((r) => r.id)).toEqual([
      'd',
      'd/rs',
      'd/rs/p2',
    ]);
    expect(visibleRows(idx, new Set(), { ...none, text: 'svc' }).map((r) => r.id)).toEqual(['svc']);
    expect(visibleRows(idx, new Set(), { ...none, kind: 'Pod' }).map((r) => r.id)).toEqual([
      'd',
      'd/rs',
      'd/rs/p1',
      'd/rs/p2',
    ]);
  });
  it('summarizes a group of siblings with problems named', () => {
    const pods = Array.from({ length: 240 }, (_, i) =>
      n(`p${i}`, 'Pod', 'rs', i < 2 ? 'Degraded' : 'Healthy', i < 2 ? 'container x: CrashLoopBackOff' : ''),
    );
    expect(groupLabel(pods)).toBe('240 Pods: 238 Running, 2 CrashLoopBackOff');
  });
  it('lays out only visible rows and groups large sibling sets', () => {
    const many = [
      n('d', 'Deployment'),
      n('d/rs', 'ReplicaSet', 'd'),
      ...Array.from({ length: 50 }, (_, i) => n(`d/rs/p${i}`, 'Pod', 'd/rs', i === 7 ? 'Degraded' : 'Healthy', 'x')),
    ];
    const rows = visibleRows(indexTree(many), new Set(['d', 'd/rs']), none);
    const g = layoutGraph(rows);
    expect(g.boxes).toHaveLength(3);
    const group = g.boxes.find((b) => b.group === 50);
    expect(group?.health).toBe('Degraded');
    expect(g.edges).toEqual([
      { from: 'd', to: 'd/rs' },
      { from: 'd/rs', to: 'd/rs#Pod' },
    ]);
  });
  it('windowed: a "more" row after each sibling set the view holds only part of, none while filtering', () => {
    // the view holds 2 of 5 roots; d's ReplicaSet holds 1 of its 3 Pods; svc is expanded with none loaded
    const part = [
      { ...n('d', 'Deployment'), childCount: 1 },
      { ...n('d/rs', 'ReplicaSet', 'd'), childCount: 3 },
      n('d/rs/p1', 'Pod', 'd/rs'),
      { ...n('svc', 'Service'), childCount: 4 },
    ];
    const ix = indexTree(part);
    const rows = visibleRows(ix, new Set(['d', 'd/rs', 'svc']), none, { rootCount: 5 });
    expect(rows.map((r) => (isMoreRow(r) ? `${r.id} ${r.loaded}/${r.total} @${r.depth}` : r.id))).toEqual([
      'd',
      'd/rs',
      'd/rs/p1',
      'more:d/rs 1/3 @2',
      'svc',
      'more:svc 0/4 @1',
      'more: 2/5 @0',
    ]);
    // collapsed: no more row under it; filtered: the BFF answered the filter, nothing is "more"
    expect(visibleRows(ix, new Set(['d']), none, { rootCount: 2 }).map((r) => r.id)).toEqual(['d', 'd/rs', 'svc']);
    expect(visibleRows(ix, new Set(), { ...none, kind: 'Pod' }, { rootCount: 5 }).some(isMoreRow)).toBe(false);
  });
  it("windowed: the BFF's cursor decides whether a set has more, not the counts (repeats, objects made since)", () => {
    const part = [
      { ...n('d', 'Deployment'), childCount: 1 },
      { ...n('d/rs', 'ReplicaSet', 'd'), childCount: 3 },
      n('d/rs/p1', 'Pod', 'd/rs'),
      n('d/rs/p2', 'Pod', 'd/rs'),
      n('d/rs/p3', 'Pod', 'd/rs'),
      { ...n('svc', 'Service'), childCount: 4 },
    ];
    const ix = indexTree(part);
    const more = (sets: Record<string, boolean>) => (id: string) => sets[id];
    const rows = (hasMore: (id: string) => boolean | undefined) =>
      visibleRows(ix, new Set(['d', 'd/rs', 'svc']), none, { rootCount: 2, hasMore })
        .filter(isMoreRow)
        .map((r) => `${r.id} ${r.loaded}/${r.total}`);
    // the roots' walk has a cursor though both counted roots are loaded (one made since); the ReplicaSet's
    // walk has one too (3 of 3 counted); the Service's children: no window of them came, so its count decides
    expect(rows(more({ '': true, 'd/rs': true }))).toEqual(['more:d/rs 3/3', 'more:svc 0/4', 'more: 2/2']);
    // walks at their end: no "more", whatever the counts say
    expect(rows(more({ '': false, 'd/rs': false, svc: false }))).toEqual([]);
  });
});
