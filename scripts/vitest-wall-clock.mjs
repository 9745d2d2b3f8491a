// A vitest reporter that records each test file's wall-clock time, from the moment a worker takes it to its end:
// set-up, beforeAll and afterAll hooks included. (vitest's JSON report spans only the first test's start to the
// last test's end, so a file whose estate takes two minutes to build reads as a few seconds there.)
// Written to $VITEST_WALL_CLOCK_FILE as [{ file, seconds }]; scripts/test.mjs reads it.
import { writeFileSync } from 'node:fs';

export default class WallClock {
  started = new Map();
  files = [];

  onTestModuleQueued(m) {
    this.started.set(m.moduleId, Date.now());
  }

  onTestModuleEnd(m) {
    const t0 = this.started.get(m.moduleId) ?? Date.now();
    this.files.push({ file: m.moduleId, seconds: Math.round((Date.now() - t0) / 100) / 10 });
  }

  onTestRunEnd() {
    const out = process.env.VITEST_WALL_CLOCK_FILE;
    if (out) writeFileSync(out, JSON.stringify(this.files, null, 1));
  }
}
