import { useMemo } from 'react';
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { BOX_H, BOX_W, layoutGraph } from '../lib/graph-layout.ts';

const FILL: Record<string, string> = {
  Healthy: '#ecfdf5',
  Progressing: '#f0f9ff',
  Degraded: '#fef2f2',
  Suspended: '#f1f5f9',
  Missing: '#fffbeb',
  Unknown: '#fafafa',
};
const STROKE: Record<string, string> = {
  Healthy: '#6ee7b7',
  Progressing: '#7dd3fc',
  Degraded: '#fca5a5',
  Suspended: '#cbd5e1',
  Missing: '#fcd34d',
  Unknown: '#d4d4d8',
};

/** Lays out only the visible rows (collapsed subtrees cost nothing); big sibling sets become one group box. */
export function TreeGraph({ rows, onOpen }: { rows: TreeNodeDto[]; onOpen: (id: string) => void }) {
  const g = useMemo(() => layoutGraph(rows), [rows]);
  const pos = new Map(g.boxes.map((b) => [b.id, b]));
  return (
    <div className="h-[28rem] overflow-auto rounded border border-slate-100" data-testid="tree-graph">
      <svg width={g.width + 20} height={g.height + 20} role="img" aria-label="Resource graph">
        {g.edges.map((e) => {
          const a = pos.get(e.from);
          const b = pos.get(e.to);
          if (!a || !b) return null;
          return (
            <path
              key={`${e.from}->${e.to}`}
              d={`M${a.x + BOX_W},${a.y + BOX_H / 2} C${a.x + BOX_W + 30},${a.y + BOX_H / 2} ${b.x - 30},${b.y + BOX_H / 2} ${b.x},${b.y + BOX_H / 2}`}
              fill="none"
              stroke="#cbd5e1"
            />
          );
        })}
        {g.boxes.map((b) => (
          <g
            key={b.id}
            transform={`translate(${b.x + 4},${b.y + 4})`}
            onClick={() => !b.group && onOpen(b.id)}
            className={b.group ? '' : 'cursor-pointer'}
            data-testid="graph-box"
            data-health={b.health}
          >
            <rect width={BOX_W} height={BOX_H} rx={6} fill={FILL[b.health]} stroke={STROKE[b.health]} />
            <text x={8} y={18} fontSize={12} fontWeight={600}>
              {b.label.length > 34 ? `${b.label.slice(0, 33)}…` : b.label}
            </text>
            <text x={8} y={35} fontSize={10} fill="#475569">
              {(b.sync ? `${b.sync} · ` : '') + (b.sub.length > 40 ? `${b.sub.slice(0, 39)}…` : b.sub)}
            </text>
          </g>
        ))}
      </svg>
    </div>
  );
}
