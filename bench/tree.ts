// Tree benchmark: a synthetic app made of real objects in the sandbox (Deployments whose kwok pods really
// run), at ~5,000 and ~20,000 objects. Measures, in Chromium via Playwright, against the real BFF:
// BFF tree response from cache, navigation → first tree paint, expand all, one filter keystroke,
// a batch of 100 live updates, the longest main-thread task, and the JS heap.
// The apps are bench/tree-apps.ts, one measurement bench/tree-measure.ts.
import { KubeConfig } from '@kubernetes/client-node';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, spawnBff } from '../test/support/bff-process.ts';
import { ClusterConnection } from '../src/server/kube/connection.ts';
import { KUBECONFIG_PATH, kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { waitFor } from '../sandbox/procs.ts';
import {
  ANALYSIS_RUNS,
  CLUSTER,
  NS,
  PER_DEPLOY,
  ROLLOUT_APP,
  ROLLOUT_PODS,
  WAIT_RUNNING,
  appName,
  ensureApp,
  ensureRolloutApp,
  podCount,
  runningPods,
} from './tree-apps.ts';
import { measureTree, type Ctx } from './tree-measure.ts';

const SIZES = (process.env.BENCH_TREE_SIZES ?? '5000,20000').split(',').map(Number);

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
      await waitFor(
        `${want} ${WAIT_RUNNING ? 'running ' : ''}kwok pods`,
        async () => (await (WAIT_RUNNING ? runningPods() : podCount(conn))) >= want * 0.98,
        {
          timeoutMs: 900_000,
          intervalMs: 5000,
        },
      );
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
