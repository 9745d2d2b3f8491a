// The chaos matrix's shape (issue 42): at least 9 actions × 6 fault columns, every held point a point the row's
// action has, and the runner's filter. The cells themselves run in the global tier and `npm run chaos`.
import { describe, expect, it } from 'vitest';
import { allCells, selectCells } from '../chaos/matrix.ts';
import { FAULTS } from '../chaos/faults.ts';
import { ROWS } from '../chaos/rows/index.ts';

describe('the chaos matrix', () => {
  it('has at least 9 actions and 6 fault columns, and every row meets every column', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(9);
    const columns = new Set(FAULTS.map((f) => f.column));
    expect(columns.size).toBeGreaterThanOrEqual(6);
    const cells = allCells();
    for (const row of ROWS) {
      const met = new Set(cells.filter((c) => c.row === row).map((c) => c.fault.column));
      expect(
        [...columns].filter((c) => !met.has(c)),
        row.id,
      ).toEqual([]);
    }
  });

  it('holds an action only at a point it has; ids are unique', () => {
    const cells = allCells();
    for (const c of cells)
      if (['after-intent', 'mid-act', 'after-act'].includes(c.point)) expect(c.row.points, c.id).toContain(c.point);
    expect(new Set(cells.map((c) => c.id)).size).toBe(cells.length);
  });

  it('selects by row, fault and point, each part optional or *', () => {
    const all = allCells();
    expect(selectCells([])).toHaveLength(all.length);
    const one = selectCells(['freeze-start/postgres-restart/after-act']);
    expect(one.map((c) => c.id)).toEqual(['freeze-start/postgres-restart/after-act']);
    const row = selectCells(['freeze-start']);
    expect(row.length).toBeGreaterThan(5);
    expect(row.every((c) => c.row.id === 'freeze-start')).toBe(true);
    const column = selectCells(['*/disk-full']);
    // disk-full is injected before the intent, and after the act where the row has that point; a row without
    // points (a read, a delivery) meets it once
    const expected = ROWS.reduce((n, r) => n + (r.points.length ? 1 + (r.points.includes('after-act') ? 1 : 0) : 1), 0);
    expect(column.length).toBe(expected);
    expect(selectCells(['nothing-like-this'])).toEqual([]);
  });
});
