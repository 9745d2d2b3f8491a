import { useMemo } from 'react';
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { BOX_H, BOX_W, layoutGraph } from '../lib/graph-layout.ts';

// Tailwind classes (not hex) so that dark mode's palette applies to the graph as well
const BOX: Record<string, string> = {
  Healthy: 'fill-emerald-50 stroke-emerald-400',
  Progressing: 'fill-sky-50 stroke-sky-400',
  Degraded: 'fill-red-50 stroke-red-400',
  Suspended: 'fill-slate-100 stroke-slate-400',
  Missing: 'fill-amber-50 stroke-amber-400',
  Unknown: 'fill-zinc-50 stroke-zinc-400',
};

/** Lays out only the visible rows (collapsed subtrees cost nothing); big sibling sets become one group box. */
export function TreeGraph({ rows, onOpen }: { rows: TreeNodeDto[]; onOpen: (id: string) => void }) {
  const g = useMemo(() => layoutGraph(rows), [rows]);
  const pos = new Map(g.boxes.map((b) => [b.id, b]));
  return (
    <div className="max-h-[28rem] overflow-auto rounded border border-slate-200" data-testid="tree-graph">
      <svg width={g.width + 20} height={g.height + 20} role="group" aria-label="Resource graph">
        {g.edges.map((e) => {
          const a = pos.get(e.from);
          const b = pos.get(e.to);
          if (!a || !b) return null;
          return (
            <path
              key={`${e.from}->${e.to}`}
              d={`M${a.x + BOX_W},${a.y + BOX_H / 2} C${a.x + BOX_W + 30},${a.y + BOX_H / 2} ${b.x - 30},${b.y + BOX_H / 2} ${b.x},${b.y + BOX_H / 2}`}
              fill="none"
              className="stroke-slate-300"
            />
          );
        })}
        {g.boxes.map((b) => {
          // health in words, not only the colour: on the box and in its name
          const status = `${b.health}${b.sync ? ` · ${b.sync}` : ''}`;
          const line2 = `${status} · ${b.sub}`;
          return (
            <g
              key={b.id}
              transform={`translate(${b.x + 4},${b.y + 4})`}
              onClick={() => !b.group && onOpen(b.id)}
              onKeyDown={(e) => {
                if (b.group || (e.key !== 'Enter' && e.key !== ' ')) return;
                e.preventDefault();
                onOpen(b.id);
              }}
              {...(b.group
                ? { role: 'img', 'aria-label': `${b.label}, ${status}` }
                : { role: 'button', tabIndex: 0, 'aria-label': `${b.label}, ${status}${b.sub ? `: ${b.sub}` : ''}` })}
              className={`graph-node ${b.group ? '' : 'cursor-pointer'}`}
              data-testid="graph-box"
              data-health={b.health}
            >
              <rect width={BOX_W} height={BOX_H} rx={6} className={BOX[b.health]} />
              <text x={8} y={18} fontSize={12} fontWeight={600} className="fill-slate-900">
                {b.label.length > 34 ? `${b.label.slice(0, 33)}…` : b.label}
              </text>
              <text x={8} y={35} fontSize={10} className="fill-slate-700">
                {line2.length > 40 ? `${line2.slice(0, 39)}…` : line2}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
