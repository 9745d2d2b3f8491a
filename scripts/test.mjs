#!/usr/bin/env node
// npm test: the whole suite by tiers (docs/develop/testing.md), printing one closing line "N passed, N failed".
//
//   side lane (niced, beside the sandbox's start):  build SPA → typecheck → lint → docs check → format → unit → contract
//   main lane:  sandbox up → integration (file-parallel) → global (serial) → e2e (parallel, then serial) → down
//
// The contract tier needs no sandbox: its own bare cluster (etcd and apiservers, sandbox/bare-cluster.ts) from the
// sandbox's binaries and CRDs. In a full run it waits for the main lane's `sandbox up` (which builds them); alone
// (`node scripts/test.mjs static unit contract`, npm run test:fast) it builds the few it needs when missing.
//
// Each tier's per-file durations go to test-results/durations.json; the slowest 20 files, every step's time and
// every failed test (name and first lines of its message) are repeated at the very end: a CI log is read from
// its tail. `node scripts/test.mjs static unit contract` runs only the named tiers (npm run test:fast).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const node = process.execPath;
const bin = (p) => join(root, 'node_modules', p);
const outDir = join(root, 'test-results');
mkdirSync(outDir, { recursive: true });
// the bundled console and CLI each test process builds for itself (test/support/server-bundle.ts), left behind by a
// process that was killed
rmSync(join(root, 'dist', 'test-server'), { recursive: true, force: true });
const env = { ...process.env, GITOPS_SANDBOX_MANAGED: '1', FORCE_COLOR: '0', NO_COLOR: '1' };
const only = process.argv.slice(2);
const TIERS = ['static', 'unit', 'contract', 'integration', 'global', 'e2e'];
for (const t of only)
  if (!TIERS.includes(t)) {
    console.error(`unknown tier ${t}; tiers: ${TIERS.join(', ')}`);
    process.exit(2);
  }
const want = (s) => only.length === 0 || only.includes(s);
// integration workers: the files wait on controllers far more than they compute; TEST_WORKERS overrides
const workers = process.env.TEST_WORKERS ?? String(Math.max(2, availableParallelism() + 1));
const e2eWorkers = process.env.E2E_WORKERS ?? '2';
// contract workers: each file runs a BFF (or two) against the one bare cluster; CONTRACT_WORKERS overrides
const contractWorkers = process.env.CONTRACT_WORKERS ?? '2';

const totals = { passed: 0, failed: 0, skipped: 0 };
const failedSteps = [];
const failedTests = [];
const timings = [];
/** { tier, file, seconds, tests } of every test file that reported */
const fileDurations = [];
const t00 = Date.now();

/** Runs one step. live: its output streams as it comes; otherwise it is printed in one piece when it ends. */
function run(name, cmd, args, { parse, live = true, nice = false, extraEnv = {}, report } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    if (live) console.log(`\n=== ${name} ===`);
    const full = nice ? ['nice', ['-n', '10', cmd, ...args]] : [cmd, args];
    const child = spawn(full[0], full[1], {
      cwd: root,
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const take = (stream) => (chunk) => {
      const s = chunk.toString('utf8');
      out += s;
      if (live) stream.write(s);
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    child.on('error', (e) => (out += `\n${e.message}\n`));
    child.on('close', (code) => {
      if (!live) {
        console.log(`\n=== ${name} ===`);
        process.stdout.write(out);
      }
      const counts = parse ? parse(out) : { passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1, skipped: 0 };
      if (code !== 0 && counts.failed === 0) counts.failed = 1;
      totals.passed += counts.passed;
      totals.failed += counts.failed;
      totals.skipped += counts.skipped;
      const reported = report ? report() : [];
      if (code !== 0) {
        failedSteps.push(name);
        const named = reported.length ? reported : failedTestNames(out).map((t) => ({ name: t, message: '' }));
        failedTests.push(...named.map((t) => ({ ...t, name: `${name}: ${t.name}` })));
      }
      const secs = (Date.now() - t0) / 1000;
      timings.push(`${name} ${secs.toFixed(0)}s`);
      console.log(
        `--- ${name}: exit ${code} in ${secs.toFixed(1)}s (${counts.passed} passed, ${counts.failed} failed)` +
          ` [${((Date.now() - t00) / 1000).toFixed(0)}s since start]`,
      );
      resolve(code === 0);
    });
  });
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
  // a flaky test (passed on a retry) counts as failed: retries are 0, and a retried pass is not a pass here
  // "did not run": the serial specs after a parallel spec failed (the project depends on the parallel ones)
  return { passed: n('passed'), failed: n('failed') + n('flaky'), skipped: n('skipped') + n('did not run') };
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const firstLines = (s, n = 6) =>
  String(s ?? '')
    .replace(ANSI, '')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, n)
    .join('\n      ');

/** vitest's JSON report: per-file durations, and each failed test with its message */
function vitestReport(tier, file, wallFile) {
  return () => {
    const failed = [];
    if (!existsSync(file)) return failed;
    try {
      // wall-clock per file (hooks included) from our reporter; the JSON report's test span where it is missing
      const wall = new Map();
      if (existsSync(wallFile)) for (const w of JSON.parse(readFileSync(wallFile, 'utf8'))) wall.set(w.file, w.seconds);
      const j = JSON.parse(readFileSync(file, 'utf8'));
      for (const r of j.testResults ?? []) {
        fileDurations.push({
          tier,
          file: r.name.replace(root, ''),
          seconds: wall.get(r.name) ?? Math.round(((r.endTime ?? 0) - (r.startTime ?? 0)) / 100) / 10,
          tests: (r.assertionResults ?? []).length,
        });
        if (r.status === 'failed' && !(r.assertionResults ?? []).some((a) => a.status === 'failed'))
          failed.push({ name: r.name.replace(root, ''), message: firstLines(r.message) });
        for (const a of r.assertionResults ?? [])
          if (a.status === 'failed')
            failed.push({
              name: `${r.name.replace(root, '')} > ${a.fullName}`,
              message: firstLines(a.failureMessages?.[0]),
            });
      }
    } catch (e) {
      failed.push({ name: `${file} unreadable`, message: String(e) });
    }
    return failed;
  };
}

/**
 * Playwright's JSON report: per-spec durations (sum of its tests, by project: `parallel` or `serial`), and each
 * failed test with its message
 */
function playwrightReport(file) {
  return () => {
    const failed = [];
    if (!existsSync(file)) return failed;
    try {
      const j = JSON.parse(readFileSync(file, 'utf8'));
      const perFile = new Map();
      const walk = (suite, titles) => {
        for (const s of suite.suites ?? []) walk(s, [...titles, s.title]);
        for (const spec of suite.specs ?? []) {
          for (const t of spec.tests ?? []) {
            const results = t.results ?? [];
            const ms = results.reduce((a, r) => a + (r.duration ?? 0), 0);
            const f = spec.file ?? titles[0];
            const tier = t.projectName === 'serial' ? 'serial' : 'parallel';
            const cur = perFile.get(f) ?? { tier, seconds: 0, tests: 0 };
            perFile.set(f, { tier, seconds: cur.seconds + ms / 1000, tests: cur.tests + 1 });
            const last = results[results.length - 1];
            if (t.status === 'unexpected' || t.status === 'flaky')
              failed.push({
                name: [...titles.filter(Boolean), spec.title].join(' › '),
                message: firstLines(last?.error?.message ?? last?.errors?.[0]?.message),
              });
          }
        }
      };
      for (const s of j.suites ?? []) walk(s, [s.title]);
      for (const [f, v] of perFile)
        fileDurations.push({
          tier: v.tier,
          file: `e2e/${f}`,
          seconds: Math.round(v.seconds * 10) / 10,
          tests: v.tests,
        });
    } catch (e) {
      failed.push({ name: `${file} unreadable`, message: String(e) });
    }
    return failed;
  };
}

function vitest(name, project, { live = true, nice = false, extra = [] } = {}) {
  const json = join(outDir, `vitest-${project}.json`);
  const wall = join(outDir, `vitest-${project}-wall.json`);
  rmSync(json, { force: true });
  rmSync(wall, { force: true });
  return run(
    name,
    node,
    [
      bin('vitest/vitest.mjs'),
      'run',
      '--project',
      project,
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${json}`,
      '--reporter=./scripts/vitest-wall-clock.mjs',
      ...extra,
    ],
    {
      parse: vitestCounts,
      live,
      nice,
      extraEnv: { VITEST_WALL_CLOCK_FILE: wall },
      report: vitestReport(project, json, wall),
    },
  );
}

/**
 * One Playwright run of every e2e project (in the config's order: the first ones' specs start first); the serial
 * project depends on the parallel ones (E2E_SERIAL_AFTER_PARALLEL), so its specs run after theirs, one at a time
 */
function playwright(name, projects, nWorkers) {
  const json = join(outDir, 'playwright.json');
  rmSync(json, { force: true });
  return run(
    name,
    node,
    [
      bin('@playwright/test/cli.js'),
      'test',
      ...projects.map((p) => `--project=${p}`),
      `--workers=${nWorkers}`,
      '--reporter=list,json',
    ],
    {
      parse: playwrightCounts,
      extraEnv: { PLAYWRIGHT_JSON_OUTPUT_FILE: json, E2E_SERIAL_AFTER_PARALLEL: '1' },
      report: playwrightReport(json),
    },
  );
}

const needsSandbox = want('integration') || want('global') || want('e2e');
const e2eReady = want('e2e') && (existsSync('/usr/bin/chromium') || existsSync('/usr/bin/chromium-headless-shell'));

// the side lane: no controllers, niced so the sandbox's CPU-bound start is not starved on two cores
/** resolves with whether the SPA e2e needs was built (first in the side lane: e2e waits for it, not for the lane) */
let spaDone;
const spa = new Promise((resolve) => (spaDone = resolve));

async function sideLane() {
  const live = !needsSandbox;
  const opts = { live, nice: needsSandbox };
  spaDone(
    e2eReady ? await run('build SPA', node, [bin('vite/bin/vite.js'), 'build', '--logLevel', 'warn'], opts) : true,
  );
  if (want('static')) {
    // alone (test:fast), each one core: tsc and eslint side by side (format and the docs check after them), each
    // printed when it ends; beside the sandbox's start, one after another (the start needs the other core)
    const o = needsSandbox ? opts : { ...opts, live: false };
    const typecheck = () => run('typecheck', node, [bin('typescript/bin/tsc'), '-p', 'tsconfig.json', '--noEmit'], o);
    const lint = () => run('lint', node, [bin('eslint/bin/eslint.js'), '.', '--max-warnings=0'], o);
    const format = () => run('format check', node, [bin('prettier/bin/prettier.cjs'), '--check', '.'], o);
    // links, anchors, npm scripts and configuration variables named in the docs (scripts/docs-check.ts)
    const docs = () => run('docs check', node, ['--import', 'tsx', 'scripts/docs-check.ts'], o);
    if (needsSandbox) for (const step of [typecheck, lint, docs, format]) await step();
    else await Promise.all([typecheck().then(format), lint().then(docs)]);
  }
  if (want('unit')) await vitest('unit tests', 'unit', opts);
  if (want('contract')) {
    if (await contractPrerequisites(opts))
      await vitest('contract tests (bare cluster)', 'contract', {
        ...opts,
        extra: [`--maxWorkers=${contractWorkers}`],
      });
  }
}

/** The sandbox binaries and CRDs a bare cluster is made of (sandbox/bare-cluster.ts). */
const CONTRACT_NEEDS = [
  'bin/etcd',
  'bin/kube-apiserver',
  'bin/kubectl',
  'bin/imagerefl-dist',
  'bin/imageauto-dist',
  'assets/crds/flux',
  'assets/crds/argocd',
  'assets/crds/rollouts',
  'assets/crds/flagger/crd.yaml',
  'assets/crds/eso/bundle.yaml',
];
/** resolves when the main lane's `sandbox up` has ended (whatever its result) */
let sandboxUpEnded;
const sandboxUpEnd = new Promise((resolve) => (sandboxUpEnded = resolve));

/**
 * Whether the contract tier can start: beside the sandbox's start, once `sandbox up` has ended (its build.sh makes
 * every binary and the assets; a second build.sh at the same time would race it); alone, build.sh for just the
 * components it needs (etcd, kube, Flux's image automation CRDs, the CRD assets), when one is missing.
 */
async function contractPrerequisites(opts) {
  const sandboxDir = process.env.GITOPS_SANDBOX_DIR ?? join(root, '.sandbox');
  const missing = () => CONTRACT_NEEDS.filter((p) => !existsSync(join(sandboxDir, p)));
  if (needsSandbox) await sandboxUpEnd;
  else if (missing().length)
    await run('sandbox build (contract)', 'bash', ['sandbox/build.sh', 'etcd kube imagectl assets'], opts);
  const still = missing();
  if (!still.length) return true;
  console.log(`contract: missing ${still.join(', ')} in ${sandboxDir} (bash sandbox/build.sh)`);
  totals.failed++;
  failedSteps.push('contract (sandbox binaries missing)');
  return false;
}

async function mainLane() {
  if (!needsSandbox) return;
  const up = await run('sandbox up', node, ['--import', 'tsx', 'sandbox/cli.ts', 'up']);
  sandboxUpEnded();
  if (up) {
    if (want('integration'))
      await vitest('integration tests (real sandbox, file-parallel)', 'integration', {
        extra: [`--maxWorkers=${workers}`],
      });
    if (want('global')) await vitest('global tests (real sandbox, serial)', 'global');
  }
  return up;
}

const side = sideLane();
const up = await mainLane();
// e2e starts once the main lane and the SPA build are done; the rest of the side lane (static, unit, contract)
// may still be running beside it
const spaBuilt = await spa;
if (needsSandbox && up && want('e2e')) {
  if (!e2eReady) {
    console.log('e2e: /usr/bin/chromium missing (apt-get install -y chromium)');
    totals.failed++;
    failedSteps.push('e2e (no chromium)');
  } else if (spaBuilt) {
    await playwright(
      'e2e tests (Chromium: parallel specs, then serial)',
      ['parallel-long', 'parallel', 'serial'],
      e2eWorkers,
    );
  }
}
await side;
if (needsSandbox && process.env.SANDBOX_KEEP !== '1')
  await run('sandbox down', node, ['--import', 'tsx', 'sandbox/cli.ts', 'down']);

fileDurations.sort((a, b) => b.seconds - a.seconds);
writeFileSync(
  join(outDir, 'durations.json'),
  JSON.stringify(
    { totalSeconds: Math.round((Date.now() - t00) / 1000), steps: timings, files: fileDurations },
    null,
    2,
  ),
);
if (fileDurations.length) {
  console.log('\nslowest files (test-results/durations.json has them all):');
  for (const f of fileDurations.slice(0, 20))
    console.log(`  ${f.seconds.toFixed(1).padStart(7)}s  ${f.tier.padEnd(11)} ${f.file} (${f.tests} tests)`);
}
console.log(`\ntimes: ${timings.join(', ')}; total ${((Date.now() - t00) / 1000).toFixed(0)}s`);
if (failedTests.length) {
  console.log('failed tests:');
  for (const t of failedTests) console.log(`  ${t.name}${t.message ? `\n      ${t.message}` : ''}`);
}
console.log(`${failedSteps.length ? `failed steps: ${failedSteps.join(', ')}` : 'all steps passed'}`);
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failedSteps.length ? 1 : 0);
