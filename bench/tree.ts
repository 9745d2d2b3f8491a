// Tree benchmark: a synthetic app made of real objects in the sandbox (Deployments whose kwok pods really
// run), at ~5,000 and ~20,000 objects. Measures, in Chromium via Playwright, against the real BFF:
// BFF tree response from cache, navigation → first tree paint, expand all, one filter keystroke,
// a batch of 100 live updates, the longest main-thread task, and the JS heap.
import { KubeConfig } from '@kubernetes/client-node';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, spawnBff } from '../test/support/bff-process.ts';
import { ClusterConnection } from '../src/server/kube/connection.ts';
import { KUBECONFIG_PATH, kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { waitFor } from '../sandbox/procs.ts';

const CLUSTER = 'nonprod';
const NS = 'bench-tree';
const SIZES = (process.env.BENCH_TREE_SIZES ?? '5000,20000').split(',').map(Number);
const PER_DEPLOY = 48; // pods per Deployment: 1 Deployment + 1 ReplicaSet + 48 Pods = 50 objects

function appName(objects: number) {
  return `bench-tree-${objects}`;
}

/** Creates N/50 Deployments (each 48 kwok pods), and a suspended Kustomization whose inventory lists them. */
async function ensureApp(objects: number): Promise<{ deployments: number }> {
  const deployments = Math.max(1, Math.round(objects / (PER_DEPLOY + 2)));
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
  );
  const items = Array.from({ length: deployments }, (_, i) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: `w${objects}-${i}`,
      namespace: NS,
      labels: {
        'kustomize.toolkit.fluxcd.io/name': appName(objects),
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
      },
    },
    spec: {
      replicas: PER_DEPLOY,
      selector: { matchLabels: { app: `w${objects}-${i}` } },
      template: {
        metadata: { labels: { app: `w${objects}-${i}` } },
        spec: { containers: [{ name: 'w', image: 'registry.example.com/bench:1' }] },
      },
    },
  }));
  for (let i = 0; i < items.length; i += 50) {
    kubectl(
      CLUSTER,
      ['apply', '--server-side', '--field-manager=kustomize-controller', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items.slice(i, i + 50) }),
    );
  }
  const name = appName(objects);
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name, namespace: 'flux-system', labels: { env: 'dev' } },
      spec: {
        interval: '60m',
        path: './bench',
        prune: false,
        suspend: true,
        sourceRef: { kind: 'GitRepository', name: 'digital-human' },
      },
    }),
  );
  // a suspended Kustomization keeps the status we write: its inventory names the Deployments
  kubectl(CLUSTER, [
    '-n',
    'flux-system',
    'patch',
    'kustomization',
    name,
    '--subresource=status',
    '--type',
    'merge',
    '-p',
    JSON.stringify({
      status: {
        inventory: { entries: items.map((d) => ({ id: `${NS}_${d.metadata.name}_apps_Deployment`, v: 'v1' })) },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Bench',
            message: 'synthetic',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    }),
  ]);
  return { deployments };
}

const ROLLOUT_APP = 'bench-tree-rollout';
const ROLLOUT_PODS = 200;
const ANALYSIS_RUNS = 20;

/**
 * Issue 25: an app whose one object is an Argo Rollout of 200 Pods (the real Rollouts controller makes its
 * ReplicaSet, kwok its Pods) with 20 AnalysisRuns it owns (terminated at once: only their weight in the tree counts).
 */
async function ensureRolloutApp(): Promise<void> {
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
  );
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=kustomize-controller', '-f', '-'],
    JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: {
        name: 'ro-bench',
        namespace: NS,
        labels: {
          'kustomize.toolkit.fluxcd.io/name': ROLLOUT_APP,
          'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
        },
      },
      spec: {
        replicas: ROLLOUT_PODS,
        selector: { matchLabels: { app: 'ro-bench' } },
        template: {
          metadata: { labels: { app: 'ro-bench' } },
          spec: { containers: [{ name: 'w', image: 'registry.example.com/bench:1' }] },
        },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: { duration: '1s' } }] } },
        // keep every AnalysisRun: the controller deletes runs beyond these limits (default 5 each)
        analysis: { successfulRunHistoryLimit: 50, unsuccessfulRunHistoryLimit: 50 },
      },
    }),
  );
  // the runs carry the pod-template hash of a ReplicaSet of the Rollout, or its controller deletes them
  let ro: { metadata: { uid: string }; status?: { currentPodHash?: string } } = { metadata: { uid: '' } };
  await waitFor(
    'the Rollout’s ReplicaSet',
    async () => {
      ro = JSON.parse(kubectl(CLUSTER, ['-n', NS, 'get', 'rollout', 'ro-bench', '-o', 'json'])) as typeof ro;
      return !!ro.status?.currentPodHash;
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  const runs = Array.from({ length: ANALYSIS_RUNS }, (_, i) => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AnalysisRun',
    metadata: {
      name: `ro-bench-run-${i}`,
      namespace: NS,
      labels: { 'rollouts-pod-template-hash': ro.status?.currentPodHash ?? '' },
      ownerReferences: [
        {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Rollout',
          name: 'ro-bench',
          uid: ro.metadata.uid,
          controller: true,
        },
      ],
    },
    spec: {
      terminate: true,
      metrics: [{ name: 'business', provider: { web: { url: 'http://127.0.0.1:9/check', jsonPath: '{$.status}' } } }],
    },
  }));
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: runs }),
  );
  kubectl(
    CLUSTER,
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: ROLLOUT_APP, namespace: 'flux-system', labels: { env: 'dev' } },
      spec: {
        interval: '60m',
        path: './bench',
        prune: false,
        suspend: true,
        sourceRef: { kind: 'GitRepository', name: 'digital-human' },
      },
    }),
  );
  kubectl(CLUSTER, [
    ...['-n', 'flux-system', 'patch', 'kustomization', ROLLOUT_APP, '--subresource=status', '--type', 'merge', '-p'],
    JSON.stringify({
      status: {
        inventory: { entries: [{ id: `${NS}_ro-bench_argoproj.io_Rollout`, v: 'v1alpha1' }] },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Bench',
            message: 'synthetic',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    }),
  ]);
}

async function runningPods(): Promise<number> {
  const out = kubectl(CLUSTER, ['-n', NS, 'get', 'pods', '--field-selector=status.phase=Running', '-o', 'name']);
  return out.split('\n').filter(Boolean).length;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

async function measureTree(
  ctx: Ctx,
  id: string,
  size: number,
  title: (total: number) => string,
  /** the app's own Pods (the namespace holds both apps) */
  podPrefix: string,
): Promise<void> {
  const { base, auth, browser, bff, conn } = ctx;
  const treeUrl = `${base}/api/apps/${id}/tree`;
  await waitFor(
    'tree complete in the BFF cache',
    async () => {
      const r = (await (await fetch(treeUrl, auth)).json()) as { summary?: { total: number } };
      return (r.summary?.total ?? 0) >= size * 0.98;
    },
    { timeoutMs: 300_000, intervalMs: 2000 },
  );
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    bytes = (await (await fetch(treeUrl, auth)).arrayBuffer()).byteLength;
    times.push(performance.now() - t);
  }
  const total = ((await (await fetch(treeUrl, auth)).json()) as { summary: { total: number } }).summary.total;

  const page = await (await browser.newContext({ storageState: bff.storageState })).newPage();
  await page.addInitScript(() => {
    (window as unknown as { __long: number[] }).__long = [];
    new PerformanceObserver((l) =>
      l.getEntries().forEach((e) => (window as unknown as { __long: number[] }).__long.push(e.duration)),
    ).observe({ type: 'longtask', buffered: true });
  });
  const nav0 = Date.now();
  await page.goto(`${base}/apps/${id}`);
  await page.getByTestId('tree-row').first().waitFor();
  const firstPaint = Date.now() - nav0;
  const inPage = <T>(fn: () => Promise<T>) => page.evaluate(fn);
  const expandMs = await (async () => {
    const t = Date.now();
    await page.getByRole('button', { name: 'expand all', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="tree-row"][data-kind="Pod"]').length > 0);
    await inPage(() => new Promise((r) => requestAnimationFrame(() => r(null))));
    return Date.now() - t;
  })();
  const filter = page.getByLabel('Filter resources');
  await filter.click();
  const keyMs = await page.evaluate(async () => {
    const input = document.querySelector('input[aria-label="Filter resources"]') as HTMLInputElement;
    const t = performance.now();
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set;
    setter?.call(input, 'w');
    input.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t;
  });
  await filter.fill('');
  // 100 live updates: 100 concurrent pod patches (real watch events → SSE → tree refetch → re-render)
  const pods = kubectl(CLUSTER, ['-n', NS, 'get', 'pods', '-o', 'name'])
    .split('\n')
    .filter((p) => p.startsWith(`pod/${podPrefix}`))
    .slice(0, 100)
    .map((p) => p.replace('pod/', ''));
  const longestBefore = await page.evaluate(() => Math.max(0, ...(window as unknown as { __long: number[] }).__long));
  await page.evaluate(() => ((window as unknown as { __long: number[] }).__long = []));
  const treeResponses: number[] = [];
  page.on('response', (r) => {
    if (r.url().includes('/tree')) treeResponses.push(Date.now());
  });
  const u0 = Date.now();
  await Promise.all(
    pods.map((p) =>
      conn.request('PATCH', `/api/v1/namespaces/${NS}/pods/${p}`, {
        body: JSON.stringify({ metadata: { annotations: { 'bench/touch': String(u0) } } }),
        contentType: 'application/merge-patch+json',
      }),
    ),
  );
  const applied = Date.now();
  await waitFor('tree refetched after the batch', async () => treeResponses.some((t) => t > applied), {
    timeoutMs: 30_000,
    intervalMs: 20,
  });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  const rendered = Date.now();
  const longDuringUpdates = await page.evaluate(() =>
    Math.max(0, ...(window as unknown as { __long: number[] }).__long),
  );
  const heap = await page.evaluate(
    () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0,
  );
  const longest = Math.max(longestBefore, longDuringUpdates);
  await page.close();
  console.log(`\n# ${title(total)}`);
  console.log(
    `BFF GET /tree from cache     p50 ${pct(times, 50).toFixed(1)} ms  p90 ${pct(times, 90).toFixed(1)} ms  (${(bytes / 1024 / 1024).toFixed(1)} MiB)`,
  );
  console.log(`navigation → first tree row  ${firstPaint} ms`);
  console.log(`expand all                   ${expandMs} ms`);
  console.log(`filter keystroke → frame     ${keyMs.toFixed(1)} ms`);
  console.log(
    `100 live pod updates: apiserver applied them in ${applied - u0} ms; tree refetched and re-rendered ${rendered - applied} ms after the last one (longest task ${longDuringUpdates.toFixed(0)} ms)`,
  );
  console.log(`longest main-thread task     ${longest.toFixed(0)} ms (whole session: load, expand, filter, updates)`);
  console.log(`JS heap                      ${(heap / 1024 / 1024).toFixed(0)} MiB`);
}

interface Ctx {
  base: string;
  auth: { headers: { Cookie: string } };
  browser: Awaited<ReturnType<typeof chromium.launch>>;
  bff: Awaited<ReturnType<typeof spawnBff>>;
  conn: ClusterConnection;
}

async function main(): Promise<void> {
  await startSandbox({ reuse: true });
  const bff = await spawnBff('bench-tree');
  const base = bff.base;
  const auth = { headers: { Cookie: bff.admin.cookie } };
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [...CHROMIUM_ARGS.filter((a) => a !== '--headless'), '--enable-precise-memory-info'],
  });
  const kc = new KubeConfig();
  kc.loadFromFile(KUBECONFIG_PATH);
  kc.setCurrentContext(CLUSTER);
  const conn = new ClusterConnection(CLUSTER, kc);
  const ctx: Ctx = { base, auth, browser, bff, conn };
  try {
    await waitFor('BFF ready', async () => (await fetch(`${base}/readyz`)).status === 200, { timeoutMs: 60_000 });
    let totalPods = 0;
    if (process.env.BENCH_TREE_ROLLOUT !== '0') {
      await ensureRolloutApp();
      totalPods = ROLLOUT_PODS;
      const t0 = Date.now();
      await waitFor(`${ROLLOUT_PODS} running Rollout pods`, async () => (await runningPods()) >= ROLLOUT_PODS * 0.98, {
        timeoutMs: 600_000,
        intervalMs: 3000,
      });
      // the runs are still there (the controller keeps them: the history limits above)
      const runs = kubectl(CLUSTER, ['-n', NS, 'get', 'analysisruns', '-o', 'name']).split('\n').filter(Boolean).length;
      if (runs < ANALYSIS_RUNS) throw new Error(`only ${runs} of ${ANALYSIS_RUNS} AnalysisRuns are left`);
      // Rollout + its ReplicaSet(s) + 200 Pods + 20 AnalysisRuns
      await measureTree(
        ctx,
        `nonprod/flux-system/kustomization/${ROLLOUT_APP}`,
        ROLLOUT_PODS + ANALYSIS_RUNS + 2,
        (total) =>
          `tree of a Rollout: ${total} objects (${ROLLOUT_PODS} Pods, ${ANALYSIS_RUNS} AnalysisRuns; up in ${((Date.now() - t0) / 1000).toFixed(0)} s) — target: first row < 2 s, longest task < 200 ms`,
        'ro-bench-',
      );
    }
    for (const size of SIZES) {
      const { deployments } = await ensureApp(size);
      totalPods += deployments * PER_DEPLOY;
      const want = totalPods;
      const t0 = Date.now();
      await waitFor(`${want} running kwok pods`, async () => (await runningPods()) >= want * 0.98, {
        timeoutMs: 900_000,
        intervalMs: 5000,
      });
      const createS = (Date.now() - t0) / 1000;
      const id = `nonprod/flux-system/kustomization/${appName(size)}`;
      await measureTree(
        ctx,
        id,
        size,
        (total) =>
          `tree of ${total} objects (${deployments} Deployments × ${PER_DEPLOY} kwok pods; created in ${createS.toFixed(0)} s)`,
        `w${size}-`,
      );
    }
  } finally {
    await browser.close();
    await bff.stop();
    if (process.env.BENCH_KEEP !== '1') {
      kubectl(CLUSTER, ['delete', 'namespace', NS, '--wait=false']);
      for (const n of [...SIZES.map(appName), ROLLOUT_APP])
        kubectl(CLUSTER, ['-n', 'flux-system', 'delete', 'kustomization', n, '--ignore-not-found']);
    }
  }
}

await main();
process.exit(0);
