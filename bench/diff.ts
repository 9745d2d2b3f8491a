// Diff benchmark (npm run bench:diff):
//  1. ownersByPath on an object with 10,000 managed fields; reference: JSON.parse of the same managedFields.
//  2. Whole-app diff of 1,000 objects end to end through the BFF (render with flux-render, field diff with owners;
//     each object dry-run unless its apply provably changes nothing, domain/apply-noop.ts); A/B in the same run:
//     the same first diff with CONSOLE_DIFF_PROOF=off (every object dry-run, the code before); reference in the
//     same run: `kubectl diff --server-side` on the same rendered objects (the sandbox-built kubectl). All run as
//     the console's own identity (.sandbox/kubeconfig-console, deploy/rbac.yaml), and the run fails if any object
//     fell back to the normalized comparison (a 403 would do that silently and measure nothing).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownersByPath } from '../src/domain/managed-fields.ts';
import { bin, kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { readState } from '../sandbox/state.ts';
import { waitFor } from '../sandbox/procs.ts';
import { commitAndPush, requestReconcile, writeRepoFile } from '../sandbox/scenario.ts';
import { authedFetch, startTestConsole, waitForStreamMessage } from '../test/support/console.ts';
import { bffKubeconfig } from '../test/support/kubeconfig.ts';
import type { DiffResponse } from '../src/api/schemas.ts';

const N = Number(process.env.BENCH_DIFF_OBJECTS ?? 1000);
const TICK_MS = 10; // USER_HZ = 100 on Linux

/** CPU seconds (user + system) of a process, and of the children it has waited for (kubectl) */
function cpuOf(pid: number | 'self'): { own: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // fields 14-17 of proc(5), counted from the state (field 3) at index 0
  return { own: ((f[11] ?? 0) + (f[12] ?? 0)) * TICK_MS, children: ((f[13] ?? 0) + (f[14] ?? 0)) * TICK_MS };
}

/** the CPU each process used while `f` ran: this process (the BFF runs in it), kubectl (a waited child), nonprod's apiserver and etcd */
async function cpuDuring<T>(f: () => Promise<T> | T): Promise<{ result: T; cpu: Record<string, number> }> {
  const st = readState();
  const procs = (st?.clusters.find((c) => c.name === 'nonprod')?.procs ?? []).filter(
    (p) => p.name === 'kube-apiserver' || p.name === 'etcd',
  );
  const before = { self: cpuOf('self'), ...Object.fromEntries(procs.map((p) => [p.name, cpuOf(p.pid).own])) };
  const result = await f();
  const after = cpuOf('self');
  const cpu: Record<string, number> = {
    'bench + BFF': after.own - before.self.own,
    'children (kustomize, kubectl)': after.children - before.self.children,
  };
  for (const p of procs) cpu[p.name] = cpuOf(p.pid).own - (before as unknown as Record<string, number>)[p.name]!;
  return { result, cpu };
}
const cpuLine = (cpu: Record<string, number>) =>
  Object.entries(cpu)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
    .join(', ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function benchOwners(): void {
  const fields: Record<string, unknown> = {};
  for (let i = 0; i < 10_000; i++) fields[`f:key-${i}`] = {};
  const mf = [
    {
      manager: 'kustomize-controller',
      operation: 'Apply',
      apiVersion: 'v1',
      time: '2026-11-30T12:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': fields },
    },
  ];
  const text = JSON.stringify(mf);
  const obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'big', managedFields: JSON.parse(text) as unknown },
  };
  for (let i = 0; i < 5; i++) ownersByPath(obj);
  const t1: number[] = [];
  const t2: number[] = [];
  for (let i = 0; i < 30; i++) {
    let t = performance.now();
    const o = ownersByPath(obj);
    t1.push(performance.now() - t);
    if (Object.keys(o).length !== 10_000) throw new Error('decoder lost fields');
    t = performance.now();
    JSON.parse(text);
    t2.push(performance.now() - t);
  }
  console.log(
    `\n# ownersByPath, 10,000 managed fields: median ${median(t1).toFixed(2)} ms; reference JSON.parse of the same managedFields ${median(t2).toFixed(2)} ms (ratio ${(median(t1) / median(t2)).toFixed(1)}x)`,
  );
}

async function benchAppDiff(): Promise<void> {
  await startSandbox({ reuse: true });
  kubectl(
    'nonprod',
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-diff' } }),
  );
  const docs = Array.from(
    { length: N },
    (_, i) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-${i}\n  labels:\n    app: bench\ndata:\n  index: "${i}"\n  payload: ${'x'.repeat(64)}\n`,
  ).join('---\n');
  commitAndPush(`bench: ${N} objects`, (w) => writeRepoFile(w, 'bench/diff/objects.yaml', docs));
  kubectl(
    'nonprod',
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'bench-diff', namespace: 'flux-system', labels: { env: 'dev' } },
      spec: {
        interval: '10m',
        path: './bench/diff',
        targetNamespace: 'bench-diff',
        prune: false,
        sourceRef: { kind: 'GitRepository', name: 'digital-human' },
      },
    }),
  );
  // applied once with all N objects (not "at our commit": other sessions may push to the shared seed repo
  // meanwhile, so the applied revision can be a later one that still holds bench/diff)
  let nudged = 0;
  await waitFor(
    `bench-diff applied with ${N} objects`,
    async () => {
      if (Date.now() - nudged > 10_000) {
        nudged = Date.now();
        requestReconcile('nonprod', 'kustomization', 'bench-diff');
      }
      const k = JSON.parse(
        kubectl('nonprod', ['-n', 'flux-system', 'get', 'kustomization', 'bench-diff', '-o', 'json']),
      ) as {
        status?: { inventory?: { entries?: unknown[] } };
      };
      return k.status?.inventory?.entries?.length === N;
    },
    { timeoutMs: 300_000, intervalMs: 2000 },
  );
  const url = (c: { url: string }) => `${c.url}/api/apps/nonprod/flux-system/kustomization/bench-diff/diff`;
  /**
   * A console of its own (cold caches) and its first diffs: the first is the cold one (render + what it sends
   * to the apiserver), then 3 repeats. Fails unless every object was compared by dry-run or by the managedFields
   * proof (a 403 would silently fall back to the normalized comparison and measure nothing).
   */
  async function firstDiffs(env: Record<string, string>) {
    const c = await startTestConsole(env);
    try {
      await waitFor('console ready', async () => (await fetch(`${c.url}/readyz`)).status === 200, {
        timeoutMs: 60_000,
      });
      // wait on the app, not its diff: the first /diff below is the cold one
      await waitFor('app known', async () => (await authedFetch(url(c).replace(/\/diff$/, ''))).status === 200, {
        timeoutMs: 60_000,
      });
      const times: number[] = [];
      let firstCpu: Record<string, number> = {};
      let modes: Record<string, number> = {};
      for (let i = 0; i < 4; i++) {
        const t = performance.now();
        const { result: d, cpu } = await cpuDuring(
          async () => (await (await authedFetch(url(c))).json()) as DiffResponse,
        );
        times.push(performance.now() - t);
        if (d.state !== 'ok') throw new Error('diff state not ok');
        const fallback = d.objects.filter((o) => o.mode === 'normalized');
        if (fallback.length)
          throw new Error(
            `${fallback.length} of ${d.objects.length} objects were not compared by server-side dry-run (first: ${fallback[0]?.ref.kind} ${fallback[0]?.ref.name}: ${fallback[0]?.note ?? ''}); check deploy/rbac.yaml`,
          );
        if (d.objects.length !== N) throw new Error(`compared ${d.objects.length} objects, expected ${N}`);
        if (i === 0) {
          firstCpu = cpu;
          modes = {};
          for (const o of d.objects) modes[o.mode] = (modes[o.mode] ?? 0) + 1;
        }
      }
      return { times, firstCpu, modes };
    } finally {
      await c.close();
    }
  }
  // A/B in this run: every object dry-run (CONSOLE_DIFF_PROOF=off, the code before, what kubectl does), then
  // the default (the apply-noop proof from managedFields)
  const off = await firstDiffs({ CONSOLE_DIFF_PROOF: 'off' });
  if (Object.keys(off.modes).join() !== 'server-dry-run')
    throw new Error(`proof off: modes ${JSON.stringify(off.modes)}`);
  const on = await firstDiffs({});
  const ours = on.times;
  const firstCpu = on.firstCpu;
  const objects = N;
  const con = await startTestConsole();
  try {
    await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, {
      timeoutMs: 60_000,
    });
    const url0 = url(con);
    await waitFor('first diff', async () => (await authedFetch(url0)).status === 200, { timeoutMs: 120_000 });
    // one object changes live (as a person with kubectl would): from the change event reaching the BFF (its SSE
    // message for the app, which is what makes the SPA refetch) to the re-diff showing it
    const appId = 'nonprod/flux-system/kustomization/bench-diff';
    const rediff: number[] = [];
    for (let k = 0; k < 5; k++) {
      const name = `cfg-${(k * 197) % N}`;
      const heard = waitForStreamMessage<{ type: string; id?: string }>(
        con.url,
        (m) => m.type === 'app-objects' && m.id === appId,
        60_000,
      );
      await new Promise((r) => setTimeout(r, 500)); // the stream is open
      kubectl('nonprod', [
        '-n',
        'bench-diff',
        'patch',
        'configmap',
        name,
        '--type',
        'merge',
        '-p',
        `{"data":{"index":"live-${k}"}}`,
      ]);
      await heard;
      const t = performance.now();
      const d = (await (await authedFetch(url0)).json()) as DiffResponse;
      rediff.push(performance.now() - t);
      const o = d.objects.find((x) => x.ref.name === name);
      if (o?.status !== 'changed') throw new Error(`re-diff: ${name} is ${o?.status ?? 'absent'}, expected changed`);
    }
    // reference: kubectl diff --server-side on the same rendered objects
    const dir = mkdtempSync(join(tmpdir(), 'bench-diff-'));
    const rendered = docs
      .split('---\n')
      .map((d) => d.replace('metadata:\n', 'metadata:\n  namespace: bench-diff\n'))
      .join('---\n');
    writeFileSync(join(dir, 'rendered.yaml'), rendered);
    const ref: number[] = [];
    let refCpu: Record<string, number> = {};
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const { result: r, cpu } = await cpuDuring(() =>
        spawnSync(
          bin('kubectl'),
          [
            ...['--kubeconfig', bffKubeconfig(), '--context', 'nonprod'],
            'diff',
            '--server-side',
            '--field-manager=kustomize-controller',
            '--force-conflicts',
            '-f',
            join(dir, 'rendered.yaml'),
          ],
          { encoding: 'utf8', maxBuffer: 256 << 20 },
        ),
      );
      ref.push(performance.now() - t);
      refCpu = cpu;
      if (r.status !== 0 && r.status !== 1) throw new Error(`kubectl diff failed: ${r.stderr}`);
    }
    console.log(
      `\n# whole-app diff of ${objects} objects (render + server-side dry-run + field diff with owners), as the console identity`,
    );
    const modeLine = (m: Record<string, number>) =>
      Object.entries(m)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ');
    console.log(`objects compared         ${objects}: ${modeLine(on.modes)} (none normalized)`);
    const [cold = NaN, ...warm] = ours;
    const [coldOff = NaN, ...warmOff] = off.times;
    console.log(`console BFF /diff, first request (render + ${modeLine(on.modes)}) ${cold.toFixed(0)} ms`);
    console.log(
      `  the same with CONSOLE_DIFF_PROOF=off (every object dry-run, the code before) ${coldOff.toFixed(0)} ms (${(cold / coldOff).toFixed(2)}x); its repeats ${median(warmOff).toFixed(0)} ms; CPU meanwhile: ${cpuLine(off.firstCpu)}`,
    );
    console.log(`console BFF /diff, repeated, nothing changed (median of 3) ${median(warm).toFixed(0)} ms`);
    console.log(`kubectl diff --server-side (same objects, same cluster) ${median(ref).toFixed(0)} ms`);
    console.log(`  CPU used meanwhile: ${cpuLine(firstCpu)}; during the last kubectl run: ${cpuLine(refCpu)}`);
    console.log(
      `ratio console first request / kubectl  ${(cold / median(ref)).toFixed(2)}x (target ≤ 0.5x: ${cold / median(ref) <= 0.5 ? 'met' : 'NOT MET'})`,
    );
    console.log(
      `re-diff after one object changed live: change event at the BFF → diff answered, median of ${rediff.length} ${median(rediff).toFixed(0)} ms (max ${Math.max(...rediff).toFixed(0)} ms; target < 100 ms: ${median(rediff) < 100 ? 'met' : 'NOT MET'}); reference: the repeat with nothing changed ${median(warm).toFixed(0)} ms`,
    );
  } finally {
    await con.close();
    kubectl('nonprod', [
      '-n',
      'flux-system',
      'delete',
      'kustomization',
      'bench-diff',
      '--ignore-not-found',
      '--wait=false',
    ]);
    kubectl('nonprod', ['delete', 'namespace', 'bench-diff', '--wait=false']);
  }
}

benchOwners();
if (!process.argv.includes('--owners-only')) await benchAppDiff();
process.exit(0);
