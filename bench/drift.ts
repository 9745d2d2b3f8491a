// Drift benchmark (issue 12): what live drift detection costs the BFF. 20,000 objects an app manages
// (ConfigMaps applied by kustomize-controller's field manager, tracked by the Flux labels of a suspended
// Kustomization) and 200 object updates per second:
//   - 180/s routine writes by another manager to a field Git does not declare (an agent's heartbeat
//     annotation): the detector's most expensive "no drift" path (a refreshed non-controller entry, so
//     both versions are flattened and compared);
//   - 10/s hand edits (kubectl-edit) of a field Git declares: each opens a drift episode (drift.detected);
//   - 10/s re-applies by kustomize-controller of the objects edited a second before: each episode ends
//     (drift.reverted).
// Two BFFs watch the same clusters during the same run, one with detection off (CONSOLE_DRIFT_DETECTION=off);
// their CPU (utime + stime from /proc/<pid>/stat) over the same window gives the added cost.
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { spawnBff } from '../test/support/bff-process.ts';
import { ClusterConnection } from '../src/server/kube/connection.ts';
import { KUBECONFIG_PATH, kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { sleep, waitFor } from '../sandbox/procs.ts';

const CLUSTER = 'nonprod';
const NS = 'bench-drift';
const APP = 'bench-drift';
const OBJECTS = Number(process.env.BENCH_DRIFT_OBJECTS ?? 20_000);
const RATE = Number(process.env.BENCH_DRIFT_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_DRIFT_SECONDS ?? 30);
const WARMUP_S = 5;
const EDITS_PER_S = Math.max(1, Math.round(RATE / 20)); // 10 edits + 10 reverts of 200

const TRACK = {
  'kustomize.toolkit.fluxcd.io/name': APP,
  'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
};
const cmName = (i: number) => `d${i}`;
/** what "Git" (kustomize-controller's apply) says of object i */
const desired = (i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: cmName(i), namespace: NS, labels: TRACK },
  data: { mode: 'standard', shard: String(i % 64) },
});

async function ensureObjects(): Promise<void> {
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
  );
  const have = kubectl(CLUSTER, ['-n', NS, 'get', 'configmaps', '-o', 'name']).split('\n').filter(Boolean).length;
  if (have < OBJECTS) {
    for (let i = 0; i < OBJECTS; i += 1000) {
      const items = Array.from({ length: Math.min(1000, OBJECTS - i) }, (_, j) => desired(i + j));
      kubectl(
        CLUSTER,
        ['apply', '--server-side', '--force-conflicts', '--field-manager=kustomize-controller', '-f', '-'],
        JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
      );
    }
  }
  // the app: suspended (no controller acts on it); the objects are its by their Flux labels
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: APP, namespace: 'flux-system', labels: { env: 'dev' } },
      spec: {
        interval: '60m',
        path: './bench',
        prune: false,
        suspend: true,
        sourceRef: { kind: 'GitRepository', name: 'digital-human' },
      },
    }),
  );
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime (fields 14 and 15 of stat)
}

async function main(): Promise<void> {
  await startSandbox({ reuse: true });
  const t0 = Date.now();
  await ensureObjects();
  const createS = (Date.now() - t0) / 1000;
  const on = await spawnBff('bench-drift-on');
  const off = await spawnBff('bench-drift-off', { env: { CONSOLE_DRIFT_DETECTION: 'off' } });
  const kc = new KubeConfig();
  kc.loadFromFile(KUBECONFIG_PATH);
  kc.setCurrentContext(CLUSTER);
  const conn = new ClusterConnection(CLUSTER, kc);
  const patch = async (i: number, manager: string, body: unknown, type: string, extra = '') => {
    const r = await conn.request(
      'PATCH',
      `/api/v1/namespaces/${NS}/configmaps/${cmName(i)}?fieldManager=${manager}${extra}`,
      { body: JSON.stringify(body), contentType: type },
    );
    if (r.status !== 200) throw new Error(`PATCH ${cmName(i)} as ${manager}: ${r.status} ${r.body.slice(0, 200)}`);
  };
  try {
    for (const b of [on, off]) {
      const auth = { headers: { Cookie: b.admin.cookie } };
      await waitFor(
        `${b.base}: ${OBJECTS} ConfigMaps in the cache and the bench app listed`,
        async () => {
          const cs = (await (await fetch(`${b.base}/api/clusters`, auth)).json()) as {
            clusters: Array<{ name: string; kinds: Record<string, { objects: number; synced: boolean }> }>;
          };
          const kinds = cs.clusters.find((c) => c.name === CLUSTER)?.kinds ?? {};
          const cm = Object.entries(kinds).find(([k]) => /configmap/i.test(k))?.[1];
          const apps = (await (await fetch(`${b.base}/api/apps?q=${APP}`, auth)).json()) as { apps: unknown[] };
          return !!cm?.synced && cm.objects >= OBJECTS && apps.apps.length > 0;
        },
        { timeoutMs: 600_000, intervalMs: 2000 },
      );
    }

    // the load: RATE updates per second, in 20 slices of 50 ms
    let stop = false;
    let sent = 0;
    let errors = 0;
    let nextRoutine = 0;
    let nextEdit = 0;
    const editedLastSecond: number[][] = [[]];
    const load = (async () => {
      const slice = 50;
      const perSlice = RATE / (1000 / slice);
      let second = 0;
      for (let tick = 0; !stop; tick++) {
        const start = Date.now();
        const jobs: Array<Promise<void>> = [];
        if (tick % 20 === 0) {
          // a new second: revert what was edited a second ago, edit new objects
          const revert = editedLastSecond.shift() ?? [];
          for (const i of revert)
            jobs.push(patch(i, 'kustomize-controller', desired(i), 'application/apply-patch+yaml', '&force=true'));
          const edits: number[] = [];
          for (let e = 0; e < EDITS_PER_S; e++) {
            const i = (nextEdit++ * 7919) % OBJECTS;
            edits.push(i);
            jobs.push(patch(i, 'kubectl-edit', { data: { mode: `hand-${second}` } }, 'application/merge-patch+json'));
          }
          editedLastSecond.push(edits);
          second++;
        }
        const routine = Math.round(perSlice * (1 - (2 * EDITS_PER_S) / RATE));
        for (let r = 0; r < routine; r++) {
          const i = nextRoutine++ % OBJECTS;
          jobs.push(
            patch(
              i,
              'node-agent',
              { metadata: { annotations: { 'bench.example.com/heartbeat': String(start) } } },
              'application/merge-patch+json',
            ),
          );
        }
        const results = await Promise.allSettled(jobs);
        sent += results.length;
        errors += results.filter((x) => x.status === 'rejected').length;
        await sleep(Math.max(0, start + slice - Date.now()));
      }
      for (const i of editedLastSecond.flat())
        await patch(i, 'kustomize-controller', desired(i), 'application/apply-patch+yaml', '&force=true');
    })();

    await sleep(WARMUP_S * 1000);
    const pids = { on: on.child.pid ?? 0, off: off.child.pid ?? 0 };
    const c0 = { on: cpuSeconds(pids.on), off: cpuSeconds(pids.off) };
    const sent0 = sent;
    const w0 = Date.now();
    await sleep(SECONDS * 1000);
    const c1 = { on: cpuSeconds(pids.on), off: cpuSeconds(pids.off) };
    const windowS = (Date.now() - w0) / 1000;
    const rate = (sent - sent0) / windowS;
    stop = true;
    await load;
    await sleep(3000);

    const evidence = async (b: typeof on, type: string) => {
      const r = (await (
        await fetch(`${b.base}/api/evidence?type=${type}&limit=1000`, { headers: { Cookie: b.admin.cookie } })
      ).json()) as { events: Array<{ app?: string }> };
      return r.events.filter((e) => e.app === `${CLUSTER}/flux-system/kustomization/${APP}`).length;
    };
    const detectedOn = await evidence(on, 'drift.detected');
    const revertedOn = await evidence(on, 'drift.reverted');
    const detectedOff = await evidence(off, 'drift.detected');
    const cpuOn = c1.on - c0.on;
    const cpuOff = c1.off - c0.off;
    console.log(`\n# drift detection cost: ${OBJECTS} managed objects (created/checked in ${createS.toFixed(0)} s)`);
    console.log(
      `load                         ${rate.toFixed(0)} object updates/s for ${windowS.toFixed(0)} s (${EDITS_PER_S}/s hand edits of a Git field, ${EDITS_PER_S}/s reverts by kustomize-controller, the rest an agent's heartbeat annotation); ${errors} failed`,
    );
    console.log(
      `BFF CPU, detection off       ${cpuOff.toFixed(2)} s (${((cpuOff / windowS) * 100).toFixed(1)}% of a core)`,
    );
    console.log(
      `BFF CPU, detection on        ${cpuOn.toFixed(2)} s (${((cpuOn / windowS) * 100).toFixed(1)}% of a core)`,
    );
    console.log(
      `added by detection           ${(((cpuOn - cpuOff) / cpuOff) * 100).toFixed(1)}% (ratio on/off ${(cpuOn / cpuOff).toFixed(3)}; target < 10%)`,
    );
    console.log(
      `episodes (at most 1000 read) detection on: ${detectedOn} detected, ${revertedOn} reverted; off: ${detectedOff} detected`,
    );
  } finally {
    await on.stop();
    await off.stop();
    if (process.env.BENCH_KEEP !== '1') {
      kubectl(CLUSTER, ['delete', 'namespace', NS, '--wait=false']);
      kubectl(CLUSTER, ['-n', 'flux-system', 'delete', 'kustomization', APP, '--ignore-not-found']);
    }
  }
}

await main();
process.exit(0);
