// The tree benchmark's synthetic apps (bench/tree.ts): N/50 Deployments of 48 kwok pods each, and an Argo Rollout
// of 200 Pods with 20 AnalysisRuns, each the inventory of a suspended Kustomization; and how many of their Pods
// exist or run.
import type { ClusterConnection } from '../src/server/kube/connection.ts';
import { kubectl } from '../sandbox/sandbox.ts';
import { waitFor } from '../sandbox/procs.ts';

export const CLUSTER = 'nonprod';
export const NS = 'bench-tree';
export const PER_DEPLOY = 48; // pods per Deployment: 1 Deployment + 1 ReplicaSet + 48 Pods = 50 objects

export function appName(objects: number) {
  return `bench-tree-${objects}`;
}

/** Creates N/50 Deployments (each 48 kwok pods), and a suspended Kustomization whose inventory lists them. */
export async function ensureApp(objects: number): Promise<{ deployments: number }> {
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

export const ROLLOUT_APP = 'bench-tree-rollout';
export const ROLLOUT_PODS = 200;
export const ANALYSIS_RUNS = 20;

/**
 * Issue 25: an app whose one object is an Argo Rollout of 200 Pods (the real Rollouts controller makes its
 * ReplicaSet, kwok its Pods) with 20 AnalysisRuns it owns (terminated at once: only their weight in the tree counts).
 */
export async function ensureRolloutApp(): Promise<void> {
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

/** How many Pods the namespace holds: one LIST of one item (the apiserver says how many remain). */
export async function podCount(conn: ClusterConnection): Promise<number> {
  const r = await conn.json<{ items: unknown[]; metadata: { remainingItemCount?: number } }>(
    'GET',
    `/api/v1/namespaces/${NS}/pods?limit=1`,
    { timeoutMs: 120_000 },
  );
  return r.items.length + (r.metadata.remainingItemCount ?? 0);
}

/**
 * BENCH_TREE_RUNNING=0: wait only until the Pods exist, not until kwok has marked them Running. At 100,000 Pods
 * on 2 cores kwok marks about 8 a second (its watches are closed as too slow and re-list 96,000 Pods), so a run
 * that waits for Running does not end; the tree's size, not its Pods' phase, is what the bench measures.
 */
export const WAIT_RUNNING = process.env.BENCH_TREE_RUNNING !== '0';

export async function runningPods(): Promise<number> {
  const out = kubectl(CLUSTER, ['-n', NS, 'get', 'pods', '--field-selector=status.phase=Running', '-o', 'name']);
  return out.split('\n').filter(Boolean).length;
}
