#!/usr/bin/env node
// npm test: typecheck + lint, unit tests, then integration and e2e tests
// against one real sandbox (started here, stopped at the end), printing one
// closing line "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const node = process.execPath;
const bin = (p) => join(root, 'node_modules', p);
const env = { ...process.env, GITOPS_SANDBOX_MANAGED: '1', FORCE_COLOR: '0', NO_COLOR: '1' };
const only = process.argv.slice(2);
const want = (s) => only.length === 0 || only.includes(s);

const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
// every failed test by name, and each step's time, repeated at the very end: a CI log is often read from its tail
const failedTests = [];
const timings = [];

function run(name, cmd, args, parse) {
  console.log(`\n=== ${name} ===`);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, {
    cwd: root,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 512 * 1024 * 1024,
  });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  const counts = parse
    ? parse(`${r.stdout}\n${r.stderr}`)
    : { passed: r.status === 0 ? 1 : 0, failed: r.status === 0 ? 0 : 1, skipped: 0 };
  if (r.status !== 0 && counts.failed === 0) counts.failed = 1;
  totals.passed += counts.passed;
  totals.failed += counts.failed;
  totals.skipped += counts.skipped;
  if (r.status !== 0) failures.push(name);
  if (r.status !== 0) failedTests.push(...failedTestNames(`${r.stdout}\n${r.stderr}`).map((t) => `${name}: ${t}`));
  timings.push(`${name} ${((Date.now() - t0) / 1000).toFixed(0)}s`);
  console.log(
    `--- ${name}: exit ${r.status} in ${((Date.now() - t0) / 1000).toFixed(1)}s (${counts.passed} passed, ${counts.failed} failed)`,
  );
  return r.status === 0;
}

/** vitest's "FAIL  |project| file > suite > test" lines and Playwright's "✘ … › test" lines, each once */
function failedTestNames(out) {
  const names = new Set();
  for (const line of out.split('\n')) {
    const v = /^\s*FAIL\s+(.*\S)\s*$/.exec(line);
    if (v && v[1].includes(' > ')) names.add(v[1]);
    const p = /^\s*[✘×]\s+\d+\s+(.*?)(?:\s+\(\d[\d.]*(?:ms|s|m|h)\))?\s*$/.exec(line);
    if (p) names.add(p[1]);
  }
  return [...names];
}

function vitestCounts(out) {
  const line = out.split('\n').find((l) => /^\s*Tests\s+/.test(l)) ?? '';
  const n = (w) => Number(new RegExp(`(\\d+) ${w}`).exec(line)?.[1] ?? 0);
  return { passed: n('passed'), failed: n('failed'), skipped: n('skipped') };
}
function playwrightCounts(out) {
  const n = (w) => Number(new RegExp(`(\\d+) ${w}`).exec(out)?.[1] ?? 0);
  return { passed: n('passed'), failed: n('failed') + n('flaky') * 0, skipped: n('skipped') };
}

if (want('static')) {
  run('typecheck', node, [bin('typescript/bin/tsc'), '-p', 'tsconfig.json', '--noEmit']);
  run('lint', node, [bin('eslint/bin/eslint.js'), '.', '--max-warnings=0']);
  run('format check', node, [bin('prettier/bin/prettier.cjs'), '--check', '.']);
}
if (want('unit')) run('unit tests', node, [bin('vitest/vitest.mjs'), 'run', '--project', 'unit'], vitestCounts);

let sandboxUp = false;
if (want('integration') || want('e2e')) {
  sandboxUp = run('sandbox up', node, ['--import', 'tsx', 'sandbox/cli.ts', 'up']);
  if (sandboxUp) {
    if (want('integration'))
      run(
        'integration tests (real sandbox)',
        node,
        [bin('vitest/vitest.mjs'), 'run', '--project', 'integration'],
        vitestCounts,
      );
    if (want('e2e')) {
      if (!existsSync('/usr/bin/chromium')) {
        console.log('e2e: /usr/bin/chromium missing (apt-get install -y chromium)');
        totals.failed++;
        failures.push('e2e (no chromium)');
      } else {
        run('build SPA', node, [bin('vite/bin/vite.js'), 'build', '--logLevel', 'warn']);
        run('e2e tests (Chromium, real sandbox)', node, [bin('@playwright/test/cli.js'), 'test'], playwrightCounts);
      }
    }
  }
  if (process.env.SANDBOX_KEEP !== '1') run('sandbox down', node, ['--import', 'tsx', 'sandbox/cli.ts', 'down']);
}

console.log(`\ntimes: ${timings.join(', ')}`);
if (failedTests.length) console.log(`failed tests:\n${failedTests.map((t) => `  ${t}`).join('\n')}`);
console.log(`${failures.length ? `failed steps: ${failures.join(', ')}` : 'all steps passed'}`);
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failures.length ? 1 : 0);
