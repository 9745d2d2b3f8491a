// Test-only fault points for the chaos runs (issue 42): `CONSOLE_TEST_FAULTS` lists points at which this process
// kills itself with SIGKILL — no handler runs, nothing is flushed, exactly like a crash or an OOM kill. A point is
// `<intent type>:after-intent` (the intent recorded, the action not started) or `<intent type>:after-act` (the
// action done, its outcome not recorded). Unset (every real deployment), no point is armed and this costs a Set
// lookup per action.
export type FaultPoint = `${string}:after-intent` | `${string}:after-act`;

/** The armed points of a `CONSOLE_TEST_FAULTS` value (comma-separated; unknown shapes are ignored). */
export function armedFaults(value: string | undefined): Set<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => /^[a-z][a-z0-9.-]*:(after-intent|after-act)$/.test(s)),
  );
}

const armed = armedFaults(process.env.CONSOLE_TEST_FAULTS);

/** Kills this process at `point` when the test run armed it. */
export function faultPoint(point: FaultPoint): void {
  if (armed.size && armed.has(point)) process.kill(process.pid, 'SIGKILL');
}
