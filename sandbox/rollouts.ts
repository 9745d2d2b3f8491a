// Argo Rollouts in a sandbox cluster (issue 25): its real controller, built from the argo-rollouts module
// (sandbox/build.sh), as the ServiceAccount argo-rollouts/argo-rollouts with the ClusterRole it ships
// (sandbox/identities.ts), its metrics and healthz listeners on 127.0.0.1 (a build-time patch), no leader election.
// Its CRDs (Rollout, AnalysisRun, AnalysisTemplate, ClusterAnalysisTemplate, Experiment) are applied with the
// others at cluster start. Pods come from kwok like every other workload's.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess, waitFor, type ProcRecord } from './procs.ts';
import { BIN_DIR, bin } from './state.ts';

export const ROLLOUTS_PROCS = ['argo-rollouts'] as const;

/** The version built (its VERSION file beside the binary), or undefined when it is not built. */
export function rolloutsVersion(binDir = BIN_DIR): string | undefined {
  const f = join(binDir, 'rollouts-dist', 'VERSION');
  return existsSync(f) ? readFileSync(f, 'utf8').trim() : undefined;
}

export async function startRollouts(c: {
  name: string;
  kubeconfig: string;
  ports: { metrics: number; healthz: number };
  logf: (n: string) => string;
}): Promise<ProcRecord> {
  const proc = startProcess(
    'argo-rollouts',
    bin('rollouts-controller'),
    [
      ...['--kubeconfig', c.kubeconfig, '--leader-elect=false', '--loglevel', 'warn'],
      ...['--metricsPort', String(c.ports.metrics), '--healthzPort', String(c.ports.healthz)],
    ],
    c.logf('argo-rollouts'),
    // its own namespace (notification settings, argo-rollouts-config) comes from the downward API in a Pod
    { KUBECONFIG: c.kubeconfig, POD_NAMESPACE: 'argo-rollouts' },
  );
  await waitFor(
    `${c.name} argo-rollouts /healthz`,
    async () => (await fetch(`http://127.0.0.1:${c.ports.healthz}/healthz`)).ok,
    { proc, timeoutMs: 60_000 },
  );
  return proc;
}

/**
 * The business check a canary's analysis step runs (per environment, a ClusterAnalysisTemplate
 * `business-check-<env>`): Argo Rollouts' web metric provider against the environment's business endpoint (a
 * SIMULATION, sandbox/business-endpoint.ts), three measurements 5 s apart, each must answer `status: ok`; an error
 * (the endpoint made to fail: 503) fails the analysis at once. Applied once the endpoints' ports are known.
 */
export function businessCheckTemplates(
  endpoints: Record<string, { url: string; cluster: string }>,
): Record<string, string> {
  const byCluster: Record<string, string[]> = {};
  for (const [env, ep] of Object.entries(endpoints))
    (byCluster[ep.cluster] ??= []).push(`apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata:
  name: business-check-${env}
  labels:
    gitops-console.dev/sandbox-simulation: business-endpoint
spec:
  metrics:
    - name: business-endpoint
      interval: 5s
      count: 3
      failureLimit: 0
      consecutiveErrorLimit: 0
      successCondition: result == "ok"
      provider:
        web:
          url: ${ep.url}/checkout
          jsonPath: "{$.status}"
          timeoutSeconds: 2
`);
  return Object.fromEntries(Object.entries(byCluster).map(([c, docs]) => [c, docs.join('---\n')]));
}
