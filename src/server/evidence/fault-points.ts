// Test-only fault points for the chaos runs (issue 42). Two switches, both unset in every real deployment (then a
// point costs one Set lookup and nothing else):
//
// - `CONSOLE_TEST_FAULTS` lists points at which this process kills itself with SIGKILL — no handler runs, nothing is
//   flushed, exactly like a crash or an OOM kill.
// - `CONSOLE_TEST_FAULT_DIR` names a directory through which a chaos runner (test/chaos/) holds the process at a point
//   while it injects a fault from outside (stops an apiserver, PostgreSQL or the forge, fills the disk, kills this
//   process): when the file `arm` there names the point, the process writes `paused` (the point's name), waits until
//   `go` exists, removes all three and goes on. Only the request reaching the point waits; the rest of the process
//   (its other requests, its heartbeats and sweeps) runs on.
//
// A point is `<intent type>:<where>`: `after-intent` (the intent recorded, the action not started), `mid-act` (part of
// the action done: after a prune's first delete), `after-act` (the action done, its outcome not recorded).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type FaultWhere = 'after-intent' | 'mid-act' | 'after-act';
export type FaultPoint = `${string}:${FaultWhere}`;

const SHAPE = /^[a-z][a-z0-9.-]*:(after-intent|mid-act|after-act)$/;

/** The armed points of a `CONSOLE_TEST_FAULTS` value (comma-separated; unknown shapes are ignored). */
export function armedFaults(value: string | undefined): Set<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => SHAPE.test(s)),
  );
}

const killAt = armedFaults(process.env.CONSOLE_TEST_FAULTS);
const holdDir = process.env.CONSOLE_TEST_FAULT_DIR || undefined;

/** What the hold directory's `arm` file names (trimmed), or undefined. */
function armedInDir(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, 'arm'), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Holds the caller at `point` while a runner injects a fault, when `dir`'s `arm` names it: writes `paused`, waits
 * for `go` (checked every 20 ms), then clears the three files. Resolves at once when the point is not armed.
 */
export async function holdAt(dir: string, point: FaultPoint): Promise<void> {
  if (armedInDir(dir) !== point) return;
  // one request holds; a second one reaching the same point while the first waits goes on
  rmSync(join(dir, 'arm'), { force: true });
  writeFileSync(join(dir, 'paused'), point);
  while (!existsSync(join(dir, 'go'))) await new Promise((r) => setTimeout(r, 20));
  rmSync(join(dir, 'go'), { force: true });
  rmSync(join(dir, 'paused'), { force: true });
}

/** Kills this process at `point`, or holds it there, when the test run armed it; otherwise does nothing. */
export async function faultPoint(point: FaultPoint): Promise<void> {
  if (killAt.size && killAt.has(point)) process.kill(process.pid, 'SIGKILL');
  if (holdDir) await holdAt(holdDir, point);
}
