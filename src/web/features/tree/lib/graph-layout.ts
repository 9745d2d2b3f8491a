// Graph layout that only places what is visible: one column per depth, rows
// in order, runs of more than `groupOver` same-kind siblings collapsed into one
// group box, problems ranked first. Linear in the number of visible rows.
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { groupLabel } from './tree-view.ts';

export interface GraphBox {
  id: string;
  x: number;
  y: number;
  label: string;
  sub: string;
  health: TreeNodeDto['health'];
  sync?: TreeNodeDto['sync'];
  group?: number;
  parentId?: string;
}
export interface GraphLayout {
  boxes: GraphBox[];
  edges: Array<{ from: string; to: string }>;
  width: number;
  height: number;
}

export const BOX_W = 230;
export const BOX_H = 46;
const COL_GAP = 60;
const ROW_GAP = 10;
const RANK: Record<string, number> = { Degraded: 0, Missing: 1, Unknown: 2, Progressing: 3, Suspended: 4, Healthy: 5 };

export function layoutGraph(rows: TreeNodeDto[], groupOver = 5): GraphLayout {
  // children lists of visible rows, grouped by parent and kind
  const byParent = new Map<string, TreeNodeDto[]>();
  const roots: TreeNodeDto[] = [];
  const visible = new Set(rows.map((r) => r.id));
  for (const r of rows) {
    if (r.parentId && visible.has(r.parentId)) {
      let l = byParent.get(r.parentId);
      if (!l) byParent.set(r.parentId, (l = []));
      l.push(r);
    } else roots.push(r);
  }
  const boxes: GraphBox[] = [];
  const edges: GraphLayout['edges'] = [];
  let nextY = 0;
  const place = (items: TreeNodeDto[], depth: number, parentId?: string) => {
    const sorted = [...items].sort((a, b) => (RANK[a.health] ?? 9) - (RANK[b.health] ?? 9));
    const byKind = new Map<string, TreeNodeDto[]>();
    for (const n of sorted) {
      let l = byKind.get(n.ref.kind);
      if (!l) byKind.set(n.ref.kind, (l = []));
      l.push(n);
    }
    for (const [kind, list] of byKind) {
      if (list.length > groupOver) {
        const worst = list[0] as TreeNodeDto;
        const id = `${parentId ?? 'root'}#${kind}`;
        boxes.push({
          id,
          x: depth * (BOX_W + COL_GAP),
          y: nextY,
          label: groupLabel(list),
          sub: `${kind} group`,
          health: worst.health,
          group: list.length,
          ...(parentId ? { parentId } : {}),
        });
        if (parentId) edges.push({ from: parentId, to: id });
        nextY += BOX_H + ROW_GAP;
        continue;
      }
      for (const n of list) {
        boxes.push({
          id: n.id,
          x: depth * (BOX_W + COL_GAP),
          y: nextY,
          label: `${n.ref.kind} ${n.ref.name}`,
          sub: n.reason,
          health: n.health,
          ...(n.sync ? { sync: n.sync } : {}),
          ...(parentId ? { parentId } : {}),
        });
        if (parentId) edges.push({ from: parentId, to: n.id });
        const kids = byParent.get(n.id);
        if (kids) place(kids, depth + 1, n.id);
        else nextY += BOX_H + ROW_GAP;
      }
    }
  };
  place(roots, 0);
  const width = boxes.reduce((m, b) => Math.max(m, b.x + BOX_W), 0);
  const height = Math.max(nextY, BOX_H);
  return { boxes, edges, width, height };
}
