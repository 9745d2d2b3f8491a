// No test sleeps longer than 2 s (docs/develop/testing.md, "Time"): a test waits on the exact condition (waitFor), holds a
// "nothing happens" check by looking again and again (holdsFor in sandbox/procs.ts), or has the period injected (a
// configurable minimum, a test clock). A fixed sleep is either too short on a loaded machine (a flake) or too long
// everywhere else (the suite's time). This reads every test file for a sleep whose length is a literal over 2 s.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const LIMIT_MS = 2_000;
const SKIP = ['test/fixtures'];

function* testFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && !SKIP.includes(relative(root, p))) yield* testFiles(p);
    } else if (/\.(ts|tsx)$/.test(e.name) && (!p.startsWith(join(root, 'src')) || /\.test\.tsx?$/.test(e.name)))
      yield p;
  }
}

/** `sleep(N)`, `setTimeout(r, N)` in a promise, `page.waitForTimeout(N)`: N as written, with `_` separators */
const SLEEP =
  /\b(?:sleep\(\s*([\d_]+)\s*\)|new Promise\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*setTimeout\(\s*\2\s*,\s*([\d_]+)\s*\)|waitForTimeout\(\s*([\d_]+)\s*\))/g;

export function longSleeps(text: string): Array<{ line: number; ms: number }> {
  const out: Array<{ line: number; ms: number }> = [];
  for (const m of text.matchAll(SLEEP)) {
    const ms = Number((m[1] ?? m[3] ?? m[4] ?? '0').replaceAll('_', ''));
    const line = text.slice(0, m.index).split('\n').length;
    // a deadline raced against what the test waits for is not a sleep
    if (ms > LIMIT_MS && !/Promise\.race\(/.test(text.split('\n')[line - 1] ?? '')) out.push({ line, ms });
  }
  return out;
}

describe('no long sleeps in tests', () => {
  it('finds the shapes it looks for (so that an empty result means something)', () => {
    const sample = [
      'await sleep(35_000);',
      'await new Promise((r) => setTimeout(r, 5000));',
      'await new Promise((resolve) => setTimeout(resolve, 2500));',
      'await page.waitForTimeout(3000);',
      'await sleep(2000); await new Promise((r) => setTimeout(r, 500));',
      'await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);',
    ].join('\n');
    expect(longSleeps(sample)).toEqual([
      { line: 1, ms: 35_000 },
      { line: 2, ms: 5000 },
      { line: 3, ms: 2500 },
      { line: 4, ms: 3000 },
    ]);
  });

  it(`no file in test/, e2e/ or src/**/*.test.ts sleeps longer than ${LIMIT_MS} ms`, () => {
    const found = ['test', 'e2e', 'src']
      .flatMap((d) => [...testFiles(join(root, d))])
      .filter((f) => f !== import.meta.filename)
      .flatMap((f) => longSleeps(readFileSync(f, 'utf8')).map((s) => `${relative(root, f)}:${s.line}: ${s.ms} ms`));
    expect(found).toEqual([]);
  });
});
