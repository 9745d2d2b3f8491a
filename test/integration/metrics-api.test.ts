// The resource metrics API in the sandbox (sandbox/metrics-api.ts): the real metrics-server scrapes kwok's
// kubelet-style /metrics/resource, the aggregator serves it as metrics.k8s.io, and the seeded HPAs work — every
// Flux app is Healthy at rest (the simulated load is exactly the HPAs' target), and when prod's render-worker
// Pods get busy (a usage annotation) the HPA scales it above Git's replicas, which the console's diff shows as
// the HPA-versus-Git conflict on spec.replicas; the load back at the target, Git's replicas stay.
// The file owns its estate (test/support/own-estate.ts): the seed's prod service on prod in a namespace of its own,
// whose Pods it makes busy; the seed's apps, metrics and HPAs are only read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppsResponse, DiffResponse } from '../../src/api/schemas.ts';
import { kubectl, mustState } from '../../sandbox/sandbox.ts';
import { LOAD_PROFILE } from '../../sandbox/metrics-api.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson as kubeJson, requestReconcile } from '../../sandbox/scenario.ts';
import { authedFetch, getJson, startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Hpa {
  spec: { minReplicas: number; maxReplicas: number };
  status: { currentReplicas?: number; desiredReplicas?: number; conditions?: Condition[] };
}

/** Git's render-worker replicas per env (sandbox/seed.ts overlays; the estate's is prod's) */
const GIT_REPLICAS: Record<string, number> = { dev: 4, staging: 6, prod: 8 };
const CLUSTER_OF: Record<string, string> = { dev: 'nonprod', staging: 'nonprod', prod: 'prod' };

let estate: Estate;
let PROD_APP: string;
/** the estate's namespace on prod (its render-worker, its HPA) */
let NS: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
const apps = async () => (await getJson<AppsResponse>(con.url, '/api/apps?controller=flux')).body.apps;
/** an env's seed HPA (only read), or the estate's (`estate`) */
const hpa = (env: string) =>
  (env === 'estate'
    ? kubeJson('prod', ['-n', NS, 'get', 'hpa', 'render-worker'])
    : kubeJson(CLUSTER_OF[env] ?? env, ['-n', env, 'get', 'hpa', 'render-worker'])) as unknown as Hpa;
/**
 * The seed's Flux apps (read only): its Kustomizations read the seed repository, its HelmRelease is in a seed
 * namespace. Other files' estates change while this one runs: they are theirs to check.
 */
const isSeed = (a: AppsResponse['apps'][number]) =>
  a.kind === 'Kustomization' ? a.source.url === mustState().git.url : !a.namespace.startsWith('t-');
const cond = (h: Hpa, type: string) => h.status.conditions?.find((c) => c.type === type);
/** CPU millicores from a metrics.k8s.io quantity ("70123456n", "70m", "1") */
const milli = (q: string) =>
  q.endsWith('n')
    ? Number(q.slice(0, -1)) / 1e6
    : q.endsWith('u')
      ? Number(q.slice(0, -1)) / 1e3
      : q.endsWith('m')
        ? Number(q.slice(0, -1))
        : Number(q) * 1000;

beforeAll(async () => {
  estate = await ownEstate({ name: 'metrics-api', env: 'prod', files: digitalHumanTemplate('prod') });
  PROD_APP = estate.appId();
  NS = estate.namespace;
  con = await startTestConsole();
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
}, 300_000);
afterAll(async () => {
  try {
    await con?.close();
  } finally {
    await estate?.teardown();
  }
}, 180_000);

describe('the metrics API in the sandbox', () => {
  it('serves metrics.k8s.io through the aggregator, with kwok-simulated node and pod usage', async () => {
    for (const cluster of ['nonprod', 'prod']) {
      await waitFor(
        `${cluster}: APIService v1beta1.metrics.k8s.io Available`,
        async () => {
          const a = kubeJson(cluster, ['get', 'apiservice', 'v1beta1.metrics.k8s.io']) as {
            status?: { conditions?: Condition[] };
          };
          const c = a.status?.conditions?.find((x) => x.type === 'Available');
          if (c?.status !== 'True') throw new Error(`${c?.reason ?? ''}: ${c?.message ?? ''}`);
          return true;
        },
        { timeoutMs: 90_000, intervalMs: 1000 },
      );
      // the first scrape lands within one metric resolution (10 s) of metrics-server's start
      await waitFor(
        `${cluster}: node metrics of the three kwok nodes`,
        async () => {
          const nodes = JSON.parse(kubectl(cluster, ['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes'])) as {
            items: Array<{ metadata: { name: string } }>;
          };
          const names = nodes.items.map((n) => n.metadata.name).sort();
          expect(names).toEqual([1, 2, 3].map((i) => `${cluster}-node-${i}`));
          return true;
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
    }
    // render-worker's simulated CPU, as metrics-server computes it from kwok's cumulative counter (a rate)
    const pods = async (env: string) =>
      (
        JSON.parse(
          kubectl(CLUSTER_OF[env] ?? env, [
            ...['get', '--raw'],
            `/apis/metrics.k8s.io/v1beta1/namespaces/${env}/pods?labelSelector=app.kubernetes.io%2Fname%3Drender-worker`,
          ]),
        ) as { items: Array<{ containers: Array<{ name: string; usage: { cpu: string } }> }> }
      ).items.map((p) => milli(p.containers.find((c) => c.name === 'render')?.usage.cpu ?? '0'));
    await waitFor(
      'render-worker pod metrics in dev and prod',
      async () => {
        const [dev, prod] = [await pods('dev'), await pods('prod')];
        return dev.length > 0 && prod.length > 0;
      },
      { timeoutMs: 90_000, intervalMs: 2000 },
    );
    for (const env of ['dev', 'prod'])
      for (const m of await pods(env)) expect(m).toBeCloseTo(parseInt(LOAD_PROFILE.renderWorkerCpu, 10), -1);
  });

  it('every seeded Flux app is Healthy and Synced at rest', async () => {
    await waitFor(
      'every Flux app Healthy and Synced',
      async () => {
        const all = await apps();
        // the seed's apps and the estate's (the same service as the seed's prod, in its own namespace)
        const list = all.filter((a) => isSeed(a) || a.id === PROD_APP);
        if (!list.some((a) => a.id === PROD_APP)) throw new Error(`${PROD_APP} not listed`);
        const bad = list.filter((a) => a.health !== 'Healthy' || a.sync !== 'Synced');
        if (list.length < 4 || bad.length)
          throw new Error(JSON.stringify(bad.map((a) => [a.id, a.sync, a.health, a.healthMessage])));
        return true;
      },
      { timeoutMs: 180_000, intervalMs: 2000 },
    );
  });

  it("the HPAs are active and, at the target, hold Git's replicas", async () => {
    for (const env of ['dev', 'staging', 'prod', 'estate']) {
      await waitFor(
        `${env}: HPA ScalingActive`,
        async () => {
          const h = hpa(env);
          const c = cond(h, 'ScalingActive');
          if (c?.status !== 'True' || cond(h, 'AbleToScale')?.status !== 'True')
            throw new Error(`${c?.reason ?? ''}: ${c?.message ?? ''}`);
          return true;
        },
        { timeoutMs: 120_000, intervalMs: 2000 },
      );
      // at the target (70m of 100m requested, 70%): nothing to do, the replicas stay Git's
      const h = hpa(env);
      expect(h.status.desiredReplicas, env).toBe(h.status.currentReplicas);
      expect(h.status.desiredReplicas, env).toBe(GIT_REPLICAS[env === 'estate' ? 'prod' : env]);
    }
  });

  it("busy prod Pods: the HPA scales above Git and the diff shows the conflict on spec.replicas (the HPA's manager on /scale)", async () => {
    const busy = (on: boolean) =>
      kubectl('prod', [
        ...['-n', NS, 'annotate', 'pods', '-l', 'app.kubernetes.io/name=render-worker', '--overwrite'],
        on ? `kwok.x-k8s.io/usage-cpu=${LOAD_PROFILE.renderWorkerBusyCpu}` : 'kwok.x-k8s.io/usage-cpu-',
      ]);
    try {
      busy(true);
      let seen: DiffResponse['objects'][number]['changes'][number] | undefined;
      await waitFor(
        'the spec.replicas conflict in the prod diff',
        async () => {
          busy(true); // the Pods the HPA adds are busy too
          const res = await authedFetch(`${con.url}/api/apps/${PROD_APP}/diff`);
          if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
          const d = (await res.json()) as DiffResponse;
          const obj = d.objects.find((o) => o.ref.kind === 'Deployment' && o.ref.name === 'render-worker');
          const c = obj?.changes.find((x) => x.path === 'spec.replicas');
          if (c?.class !== 'conflict') throw new Error(JSON.stringify(c ?? obj?.status ?? d.summary));
          seen = c;
          return true;
        },
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
      expect(seen?.desired).toBe(GIT_REPLICAS.prod);
      expect(Number(seen?.live)).toBeGreaterThan(GIT_REPLICAS.prod ?? 0);
      expect(seen?.owners).toEqual(
        expect.arrayContaining([expect.objectContaining({ manager: 'kube-controller-manager', subresource: 'scale' })]),
      );
    } finally {
      busy(false);
    }
    // back at the target: Flux puts Git's 8 back and the HPA leaves it there (the estate's Flux applies when
    // asked: asked again while the HPA, still seeing the busy Pods' last metrics, scaled up once more)
    let asked = 0;
    await waitFor(
      "prod: Git's replicas again, the HPA content",
      async () => {
        const h = hpa('estate');
        const d = kubeJson('prod', ['-n', NS, 'get', 'deployment', 'render-worker']) as {
          spec: { replicas: number };
        };
        if (d.spec.replicas !== GIT_REPLICAS.prod && Date.now() - asked > 15_000) {
          asked = Date.now();
          requestReconcile('prod', 'kustomization', estate.kustomization());
        }
        if (d.spec.replicas !== GIT_REPLICAS.prod || h.status.desiredReplicas !== GIT_REPLICAS.prod)
          throw new Error(`deployment ${d.spec.replicas}, HPA desired ${h.status.desiredReplicas}`);
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    );
  });
});
