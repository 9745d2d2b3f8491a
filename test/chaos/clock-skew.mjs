// Test preload (node --import) for the chaos matrix's clock-skew cells: this process's wall clock runs
// CHAOS_CLOCK_SKEW_MS milliseconds off (positive: ahead), as on a node whose NTP failed. `Date.now()`, `new Date()`
// and `Date()` are shifted; timers and `performance.now()` (monotonic) are not, as on a real node.
import process from 'node:process';

const skew = Number(process.env.CHAOS_CLOCK_SKEW_MS || 0);
if (skew) {
  const Real = Date;
  class Skewed extends Real {
    constructor(...args) {
      if (args.length === 0) super(Real.now() + skew);
      else super(...args);
    }
    static now() {
      return Real.now() + skew;
    }
  }
  globalThis.Date = new Proxy(Skewed, {
    apply: () => new Skewed().toString(),
  });
}
