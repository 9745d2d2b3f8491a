// Diff under a live-update storm (npm run bench:diff-storm), issue 14 "Live updates without a storm":
// a 1,000-object Flux app (990 ConfigMaps + 10 Deployments with 5 kwok Pods each, like bench/diff.ts's app
// plus Pods) whose diff is open, while a load generator writes 100 Pod status updates per second for ~10 s.
// Every update is a live change of the app (an `app-objects` SSE message that makes an open diff refetch);
// the diff is requested every 2 s during the storm, as the debounced SPA does. Prints the renders and
// server-side dry-runs the BFF did during the storm (expected: none, as no managed object changed), the
// SSE messages that would have triggered refetches, and the diff latency p50 cached (quiet and during the
// storm) against the reference measured in the same run: the uncached diff of a freshly started BFF (render +
// 1,000 dry-runs), three times. The BFF runs as its own process, as the console's own identity; the load
// generator writes as the sandbox admin (as a kubelet would). BENCH_STORM_KEEP=1 keeps the app for a rerun.
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { DiffResponse } from '../src/api/schemas.ts';
import { kubeRequest, kubeTarget } from '../sandbox/kube-http.ts';
import { waitFor } from '../sandbox/procs.ts';
import { kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { commitAndPush, requestReconcile, writeRepoFile } from '../sandbox/scenario.ts';
import { mustState } from '../sandbox/state.ts';
import { spawnBff } from '../test/support/bff-process.ts';

const CLUSTER = 'nonprod';
const NS = 'bench-storm';
const KS = 'bench-storm';
const DIR = 'bench/storm';
const APP = `${CLUSTER}/flux-system/kustomization/${KS}`;
const N = Number(process.env.BENCH_STORM_OBJECTS ?? 1000);
const DEPLOYMENTS = 10;
const REPLICAS = 5;
const RATE = Number(process.env.BENCH_STORM_RATE ?? 100); // Pod status updates per second
const STORM_MS = Number(process.env.BENCH_STORM_MS ?? 10_000);
const REFETCH_MS = 2000;
const COLD_RUNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Diff = DiffResponse & { work: NonNullable<DiffResponse['work']> };

function appYaml(): string {
  const cms = Array.from(
    { length: N - DEPLOYMENTS },
    (_, i) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-${i}\n  labels:\n    app: bench\ndata:\n  index: "${i}"\n  payload: ${'x'.repeat(64)}\n`,
  );
  const deps = Array.from(
    { length: DEPLOYMENTS },
    (_, i) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: storm-${i}
spec:
  replicas: ${REPLICAS}
  selector:
    matchLabels:
      app: storm-${i}
  template:
    metadata:
      labels:
        app: storm-${i}
    spec:
      containers:
        - name: w
          image: registry.example.com/digital-human/session-cache:7.2
`,
  );
  return [...cms, ...deps].join('---\n');
}

async function setUp(): Promise<void> {
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
  );
  commitAndPush(`bench: storm app of ${N} objects`, (w) => writeRepoFile(w, `${DIR}/objects.yaml`, appYaml()));
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: KS, namespace: 'flux-system', labels: { env: 'dev' } },
      spec: {
        interval: '60m',
        path: `./${DIR}`,
        targetNamespace: NS,
        prune: false,
        sourceRef: { kind: 'GitRepository', name: 'digital-human' },
      },
    }),
  );
  // applied at this commit or a later one (the sandbox's repo is shared: someone may push meanwhile)
  let nudged = 0;
  const count = (args: string[]) =>
    kubectl(CLUSTER, ['-n', NS, 'get', ...args, '-o', 'name'])
      .split('\n')
      .filter(Boolean).length;
  await waitFor(
    `${N} objects applied and ${DEPLOYMENTS * REPLICAS} Pods running`,
    async () => {
      if (Date.now() - nudged > 10_000) {
        nudged = Date.now();
        requestReconcile(CLUSTER, 'gitrepository', 'digital-human');
        requestReconcile(CLUSTER, 'kustomization', KS);
      }
      return (
        count(['configmaps', '-l', 'app=bench']) === N - DEPLOYMENTS &&
        count(['deployments']) === DEPLOYMENTS &&
        count(['pods', '--field-selector=status.phase=Running']) >= DEPLOYMENTS * REPLICAS
      );
    },
    { timeoutMs: 900_000, intervalMs: 3000 },
  );
}

function tearDown(): void {
  kubectl(CLUSTER, ['-n', 'flux-system', 'delete', 'kustomization', KS, '--ignore-not-found', '--wait=false']);
  kubectl(CLUSTER, ['delete', 'namespace', NS, '--ignore-not-found', '--wait=false']);
  commitAndPush('bench: remove the storm app', (w) => rmSync(join(w, DIR), { recursive: true, force: true }));
}

type Bff = Awaited<ReturnType<typeof spawnBff>>;
const get = (bff: Bff, path: string, signal?: AbortSignal) =>
  fetch(bff.base + path, { headers: { Cookie: bff.admin.cookie }, ...(signal ? { signal } : {}) });

async function timedDiff(bff: Bff): Promise<{ ms: number; d: Diff }> {
  const t = performance.now();
  const res = await get(bff, `/api/apps/${APP}/diff`);
  const d = (await res.json()) as Diff;
  const ms = performance.now() - t;
  if (res.status !== 200 || d.state !== 'ok' || !d.work) throw new Error(`diff failed: ${res.status} ${d.error ?? ''}`);
  const managed = d.objects.filter((o) => o.status !== 'extraneous');
  if (managed.length !== N) throw new Error(`compared ${managed.length} objects, expected ${N}`);
  const fallback = managed.filter((o) => o.mode !== 'server-dry-run');
  if (fallback.length) throw new Error(`${fallback.length} objects not compared by server-side dry-run`);
  return { ms, d };
}

/** A freshly started BFF (its own process, empty caches) that knows the app. */
async function startBff(): Promise<Bff> {
  const bff = await spawnBff('bench-storm');
  // the app is in the console's cache (not a diff yet: that would warm the caches)
  await waitFor('app known to the console', async () => (await get(bff, `/api/apps/${APP}`)).status === 200, {
    timeoutMs: 60_000,
  });
  return bff;
}

/** Counts `app-objects` messages for the app on the console's stream (what makes an open diff refetch). */
function countAppObjects(bff: Bff, signal: AbortSignal): { count: () => number } {
  let n = 0;
  void (async () => {
    try {
      const res = await get(bff, '/api/stream', signal);
      const reader = res.body?.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const r = await reader?.read();
        if (!r || r.done) return;
        buf += dec.decode(r.value, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const data = buf
            .slice(0, i)
            .split('\n')
            .find((l) => l.startsWith('data: '));
          buf = buf.slice(i + 2);
          if (data && data.includes('"app-objects"') && data.includes(APP)) n++;
        }
      }
    } catch {
      /* aborted at the end */
    }
  })();
  return { count: () => n };
}

/**
 * RATE Pod status writes per second for `ms` (admin identity, as kwok or a kubelet would write them), one at a
 * time per Pod (two writes to one object only queue behind each other in the apiserver); a tick that finds
 * every Pod busy is skipped and counted: the apiserver, not this bench, is then the limit.
 */
async function storm(
  pods: string[],
  ms: number,
): Promise<{ sent: number; failed: Record<string, number>; skipped: number; seconds: number; p50: number }> {
  const c = mustState().clusters.find((x) => x.name === CLUSTER);
  if (!c) throw new Error(`no cluster ${CLUSTER}`);
  const t = kubeTarget(c);
  let sent = 0;
  let skipped = 0;
  const busy = new Set<string>();
  const latency: number[] = [];
  const failed: Record<string, number> = {};
  const fail = (why: string): void => {
    failed[why] = (failed[why] ?? 0) + 1;
  };
  const start = performance.now();
  const pending: Array<Promise<void>> = [];
  let next = 0;
  for (let i = 0; performance.now() - start < ms; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    let pod: string | undefined;
    for (let k = 0; k < pods.length && !pod; k++) {
      const p = pods[(next + k) % pods.length] as string;
      if (!busy.has(p)) {
        pod = p;
        next = (next + k + 1) % pods.length;
      }
    }
    if (!pod) {
      skipped++;
      continue;
    }
    const p = pod;
    busy.add(p);
    const t0 = performance.now();
    pending.push(
      kubeRequest(
        t,
        'PATCH',
        `/api/v1/namespaces/${NS}/pods/${p}/status?fieldManager=bench-storm`,
        { status: { conditions: [{ type: 'example.com/Probe', status: 'True', message: `update ${i}` }] } },
        'application/strategic-merge-patch+json',
      )
        .then(
          (r) => {
            if (r.status === 200) sent++;
            else fail(`HTTP ${r.status}`);
          },
          (e: Error) => fail(e.message),
        )
        .finally(() => {
          busy.delete(p);
          latency.push(performance.now() - t0);
        }),
    );
  }
  await Promise.all(pending);
  return { sent, failed, skipped, seconds: (performance.now() - start) / 1000, p50: median(latency) };
}

async function main(): Promise<void> {
  await startSandbox({ reuse: true });
  await setUp();
  try {
    // reference, same run: the uncached diff of a freshly started BFF (render + N server-side dry-runs)
    const cold: number[] = [];
    const coldWork: Diff['work'][] = [];
    let bff: Bff | undefined;
    for (let i = 0; i < COLD_RUNS; i++) {
      await bff?.stop();
      bff = await startBff();
      const { ms, d } = await timedDiff(bff);
      cold.push(ms);
      coldWork.push(d.work);
    }
    if (!bff) throw new Error('no BFF');
    // cached, quiet
    const quiet: number[] = [];
    for (let i = 0; i < 5; i++) quiet.push((await timedDiff(bff)).ms);

    const pods = kubectl(CLUSTER, ['-n', NS, 'get', 'pods', '-o', 'jsonpath={.items[*].metadata.name}'])
      .split(/\s+/)
      .filter(Boolean);
    const ac = new AbortController();
    const sse = countAppObjects(bff, ac.signal);
    await sleep(500);
    const before = (await timedDiff(bff)).d;
    const during: Array<{ ms: number; d: Diff }> = [];
    const load = storm(pods, STORM_MS);
    const stormStart = performance.now();
    while (performance.now() - stormStart < STORM_MS) {
      const t = performance.now();
      during.push(await timedDiff(bff));
      await sleep(Math.max(0, REFETCH_MS - (performance.now() - t)));
    }
    const sent = await load;
    await sleep(1000);
    during.push(await timedDiff(bff)); // the last refetch, after the storm's last update
    ac.abort();

    const renders = during.reduce((n, x) => n + x.d.work.renders, 0);
    const dryRuns = during.reduce((n, x) => n + x.d.work.dryRuns, 0);
    const revisionMoved = during.some((x) => x.d.render?.revision !== before.render?.revision);
    const cw = coldWork[0];
    console.log(
      `\n# diff under a live-update storm: ${N}-object app (${DEPLOYMENTS * REPLICAS} kwok Pods), as the console identity`,
    );
    console.log(
      `storm                     ${sent.sent} Pod status updates in ${sent.seconds.toFixed(1)} s (${(sent.sent / sent.seconds).toFixed(0)}/s of ${RATE}/s asked; failed ${JSON.stringify(sent.failed)}; skipped, every Pod's last write pending: ${sent.skipped}; write p50 ${sent.p50.toFixed(0)} ms)`,
    );
    console.log(`app-objects SSE messages  ${sse.count()} (each one a refetch trigger for an open diff)`);
    console.log(`diffs during the storm    ${during.length} (one every ${REFETCH_MS / 1000} s, as a debounced SPA)`);
    console.log(`renders during the storm  ${renders}`);
    console.log(`dry-runs during the storm ${dryRuns} (changed managed objects: none; ${N} compared per diff)`);
    console.log(`objects reused per diff   ${median(during.map((x) => x.d.work.cachedObjects))}`);
    console.log(
      `uncached (fresh BFF)      p50 ${median(cold).toFixed(0)} ms over ${COLD_RUNS} runs; each ${cw?.renders} render + ${cw?.dryRuns} dry-runs`,
    );
    console.log(`cached, quiet             p50 ${median(quiet).toFixed(0)} ms`);
    console.log(`cached, during the storm  p50 ${median(during.map((x) => x.ms)).toFixed(0)} ms`);
    console.log(`speed-up (uncached / storm p50) ${(median(cold) / median(during.map((x) => x.ms))).toFixed(1)}x`);
    await bff.stop();
    const rate = sent.sent / sent.seconds;
    if (rate < RATE * 0.8)
      console.log(
        `note: the apiserver sustained ${rate.toFixed(0)} Pod writes/s, not ${RATE} (write p50 ${sent.p50.toFixed(0)} ms; load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} CPUs): every write was still a live update of the app`,
      );
    if (sent.sent < 10 * (STORM_MS / 1000)) throw new Error(`the storm reached only ${sent.sent} updates`);
    if (sse.count() === 0) throw new Error('the console saw no app-objects message: the storm did not reach the app');
    if (revisionMoved) console.log('note: the Git revision moved during the storm (another push): renders allowed');
    else if (renders !== 0) throw new Error(`${renders} renders during the storm at an unchanged revision`);
    if (dryRuns !== 0) throw new Error(`${dryRuns} dry-runs during the storm, no managed object changed`);
  } finally {
    if (process.env.BENCH_STORM_KEEP !== '1') tearDown();
  }
}

await main();
process.exit(0);
