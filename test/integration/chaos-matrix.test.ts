// Chaos, in the suite (issue 42): one cell of the matrix per fault column (test/chaos/, docs/develop/chaos.md), run one
// after another in the global tier (a cell stops the apiserver, PostgreSQL or the forge that other files use). The
// whole matrix is `npm run chaos`; these cells are the ones that catch the most for their time.
import { afterAll, describe, expect, it } from 'vitest';
import { describeMatrix, runCells, selectCells } from '../chaos/matrix.ts';
import type { CellResult } from '../chaos/types.ts';

/** One cell per column: the apiserver, the forge, PostgreSQL, a replica, the disk, the clock. */
const SUITE_CELLS = [
  'freeze-start/apiserver-hang/after-intent',
  'freeze-start/postgres-restart/after-act',
  'freeze-start/replica-kill/after-intent',
  'freeze-start/replica-kill/after-act',
  'freeze-start/disk-full/before-intent',
  'freeze-start/clock-skew/during',
  'freeze-end/forge-stop/after-intent',
];

const results: CellResult[] = [];
afterAll(() => {
  // the matrix as `npm run chaos` prints it, for the run's log
  if (results.length) console.log(describeMatrix(results).join('\n'));
});

describe('the chaos matrix, one cell per fault', () => {
  const cells = selectCells(SUITE_CELLS);
  it('every suite cell exists in the matrix', () => {
    expect(cells.map((c) => c.id).sort()).toEqual([...SUITE_CELLS].sort());
  });

  it(
    'each cell: the invariants hold after the fault heals',
    async () => {
      await runCells(cells, (r) => results.push(r));
      const broke = results.filter((r) => !r.ok).map((r) => `${r.row}/${r.fault}/${r.point}: ${r.broken.join('; ')}`);
      expect(broke).toEqual([]);
      expect(results).toHaveLength(cells.length);
    },
    // each cell is bounded at 2 minutes; the estates and consoles are made once
    15 * 60_000,
  );
});
