// Freeze benchmark (issue 11): on-call freezes every app of an environment — 250 Flux Kustomizations — through
// the BFF (running as the console's own least-privilege identity), and ends the freeze again. Reported: the
// time until all 250 are suspended (the API call: read each object, store the freeze and its claims, evidence
// intent, patch each with its resourceVersion, outcome) and the time to end it (restore each exactly), against
// the reference in the same run: the same number of plain merge PATCHes (`spec.suspend`) sent by the same
// identity with the same concurrency (8).
// The Kustomizations point at a GitRepository that does not exist and reconcile hourly: Flux barely touches
// them. Everything the bench creates is deleted at the end.
import { KubeConfig } from '@kubernetes/client-node';
import { spawnBff } from '../test/support/bff-process.ts';
import { as, signIn } from '../test/support/auth.ts';
import { bffKubeconfig } from '../test/support/kubeconfig.ts';
import { ClusterConnection } from '../src/server/kube/connection.ts';
import { kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { waitFor } from '../sandbox/procs.ts';

const CLUSTER = 'nonprod';
const ENV = 'bench-freeze';
const N = Number(process.env.BENCH_FREEZE_APPS ?? 250);
const ROUNDS = Number(process.env.BENCH_FREEZE_ROUNDS ?? 3);
const CONCURRENCY = 8;
const name = (i: number) => `bench-freeze-${String(i).padStart(4, '0')}`;

function ks(i: number) {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: name(i), namespace: 'flux-system', labels: { env: ENV, 'gitops-console.dev/bench': 'freeze' } },
    spec: {
      interval: '1h',
      retryInterval: '1h',
      path: './none',
      prune: false,
      sourceRef: { kind: 'GitRepository', name: 'bench-freeze-missing' },
    },
  };
}

async function limit<T>(n: number, fn: (i: number) => Promise<T>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  await startSandbox({ reuse: true });
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: Array.from({ length: N }, (_, i) => ks(i)) }),
  );
  const bff = await spawnBff('bench-freeze');
  const cleanup = () =>
    kubectl(CLUSTER, [
      '-n',
      'flux-system',
      'delete',
      'kustomization',
      '-l',
      'gitops-console.dev/bench=freeze',
      '--wait=false',
    ]);
  try {
    const oncall = await signIn(bff.base, 'oncall');
    await waitFor(
      `${N} apps of ${ENV} listed`,
      async () => {
        const r = await as(oncall, bff.base, `/api/apps?env=${ENV}`);
        const apps = (r.body as { apps?: Array<{ env: string }> }).apps ?? [];
        return apps.filter((a) => a.env === ENV).length >= N;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    // the reference: the console's own identity, the same concurrency, one merge PATCH per object
    const kc = new KubeConfig();
    kc.loadFromFile(bffKubeconfig());
    kc.setCurrentContext(CLUSTER);
    const conn = new ClusterConnection(CLUSTER, kc);
    const plain = async (suspend: boolean | null) => {
      const t0 = performance.now();
      await limit(N, async (i) => {
        await conn.json(
          'PATCH',
          `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations/${name(i)}?fieldManager=bench`,
          { body: JSON.stringify({ spec: { suspend } }), contentType: 'application/merge-patch+json' },
        );
      });
      return performance.now() - t0;
    };
    const freezeMs: number[] = [];
    const endMs: number[] = [];
    const refMs: number[] = [];
    const refBackMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      refMs.push(await plain(true));
      refBackMs.push(await plain(null));
      let t0 = performance.now();
      const r = await as(oncall, bff.base, '/api/freezes', {
        method: 'POST',
        body: { cluster: CLUSTER, env: ENV, reason: `bench round ${round}`, minutes: 30 },
      });
      freezeMs.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`freeze: ${r.status} ${r.text}`);
      const f = (r.body as { freeze: { id: string; targets: unknown[] } }).freeze;
      if (f.targets.length !== N) throw new Error(`froze ${f.targets.length} apps, not ${N}`);
      const suspended = JSON.parse(
        kubectl(CLUSTER, ['-n', 'flux-system', 'get', 'kustomization', '-l', `env=${ENV}`, '-o', 'json']),
      ) as { items: Array<{ spec: { suspend?: boolean } }> };
      if (suspended.items.filter((k) => k.spec.suspend === true).length !== N) throw new Error('not all suspended');
      t0 = performance.now();
      const e = await as(oncall, bff.base, `/api/freezes/${f.id}/end`, { method: 'POST', body: { decisions: [] } });
      endMs.push(performance.now() - t0);
      if (e.status !== 200) throw new Error(`end: ${e.status} ${e.text}`);
    }
    const fm = median(freezeMs);
    const em = median(endMs);
    const rm = median(refMs);
    const rb = median(refBackMs);
    console.log(`\n# freeze ${N} apps of one environment (Flux Kustomizations), BFF as the console's own identity`);
    console.log(
      `median of ${ROUNDS} rounds; reference: ${N} plain merge PATCHes, same identity, concurrency ${CONCURRENCY}`,
    );
    console.log(
      `freeze (read, store + claims, evidence, ${N} PATCHes with resourceVersion): ${fm.toFixed(0)} ms  (${(fm / N).toFixed(1)} ms/app)`,
    );
    console.log(`reference: ${N} plain PATCHes: ${rm.toFixed(0)} ms  → freeze / reference = ${(fm / rm).toFixed(2)}×`);
    console.log(
      `end (restore each exactly, evidence per app): ${em.toFixed(0)} ms; reference ${rb.toFixed(0)} ms → ${(em / rb).toFixed(2)}×`,
    );
    console.log(
      `rounds: freeze ${freezeMs.map((x) => x.toFixed(0)).join(', ')} ms; reference ${refMs.map((x) => x.toFixed(0)).join(', ')} ms`,
    );
  } finally {
    await bff.stop();
    cleanup();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
