// The chaos matrix (issue 42): rows (./rows/) × faults (./faults.ts) × the points each fault is injected at, run one
// cell at a time (a cell stops shared parts of the sandbox: nothing else may run beside it). `npm run chaos` runs it
// all or a filter and prints it; the global test tier runs a subset (test/integration/chaos-matrix.test.ts).
import { runCell } from './cell.ts';
import { consoles } from './console.ts';
import { FAULTS } from './faults.ts';
import { ROWS } from './rows/index.ts';
import type { ActionRow, CellResult, Fault, Point } from './types.ts';

export interface CellPlan {
  row: ActionRow<unknown>;
  fault: Fault;
  point: Point;
  id: string;
}

/**
 * Every cell: a fault at each of its points the row has (before-intent and during need no hook). A row with no
 * points (an action without an intent: an export, a delivery) gets each fault once, in place for its whole run.
 */
export function allCells(): CellPlan[] {
  const cells: CellPlan[] = [];
  for (const row of ROWS)
    for (const fault of FAULTS) {
      const points: Point[] = row.points.length
        ? fault.points.filter((p) => p === 'before-intent' || p === 'during' || row.points.includes(p))
        : [fault.points.includes('during') ? 'during' : 'before-intent'];
      for (const point of points) cells.push({ row, fault, point, id: `${row.id}/${fault.id}/${point}` });
    }
  return cells;
}

/** Cells matching any of `patterns` (`row/fault/point`, each part a name or `*`, trailing parts optional). */
export function selectCells(patterns: string[]): CellPlan[] {
  const all = allCells();
  if (!patterns.length) return all;
  const match = (id: string, p: string) => {
    const want = p.split('/');
    return id.split('/').every((part, i) => want[i] === undefined || want[i] === '*' || want[i] === part);
  };
  return all.filter((c) => patterns.some((p) => match(c.id, p)));
}

/**
 * Runs `cells` one after another: each row's estate is made once (before its first cell) and removed after its last,
 * the consoles once per kind. `onCell` sees each result as it comes.
 */
export async function runCells(
  cells: CellPlan[],
  onCell: (r: CellResult) => void = () => undefined,
): Promise<CellResult[]> {
  const results: CellResult[] = [];
  const all = consoles();
  try {
    const rows = [...new Set(cells.map((c) => c.row))];
    for (const row of rows) {
      const mine = cells.filter((c) => c.row === row);
      let state: unknown;
      try {
        state = await row.setup();
      } catch (e) {
        for (const c of mine) {
          const r: CellResult = {
            row: row.id,
            fault: c.fault.id,
            point: c.point,
            ok: false,
            broken: [`the row's estate could not be made: ${e instanceof Error ? e.message : String(e)}`],
            seqs: '',
            said: '',
            ms: 0,
            notes: [],
          };
          results.push(r);
          onCell(r);
        }
        continue;
      }
      try {
        for (const c of mine) {
          const r = await runCell(row, state, c.fault, c.point, all);
          results.push(r);
          onCell(r);
        }
      } finally {
        await row.teardown(state).catch(() => undefined);
      }
    }
  } finally {
    await all.close();
  }
  return results;
}

/** The matrix as text: one line per cell, then per row the faults that held and broke. */
export function describeMatrix(results: CellResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    const mark = r.ok ? 'held ' : 'BROKE';
    out.push(
      `${mark} ${`${r.row} × ${r.fault} @ ${r.point}`.padEnd(58)} ${String(Math.round(r.ms / 1000)).padStart(4)} s  ${r.seqs}${r.said ? `  [${r.said}]` : ''}`,
    );
    for (const b of r.broken) out.push(`        ✗ ${b}`);
    if (!r.ok) for (const n of r.notes) out.push(`          (${n})`);
  }
  const held = results.filter((r) => r.ok).length;
  out.push(`${held} of ${results.length} cells held; ${results.length - held} broke`);
  return out;
}
