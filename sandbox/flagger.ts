// Flagger in a sandbox cluster (issue 25): its real controller v1.36.1 (the only version the module proxy serves),
// built from the flagger module (sandbox/build.sh; its HTTP server patched to listen on 127.0.0.1), as the
// ServiceAccount flagger-system/flagger with the ClusterRole it ships (sandbox/identities.ts), the `kubernetes`
// mesh provider (blue/green on Deployments: no mesh, no ingress), no leader election. It has no Prometheus: the
// seeded Canary's analysis is webhooks only (the business endpoint, and a confirm-promotion gate), so its
// metrics server points at a closed loopback port (Flagger logs it as unreachable and runs on).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess, waitFor, type ProcRecord } from './procs.ts';
import { BIN_DIR, bin } from './state.ts';
import { SEED_INFRA_INTERVAL } from './flux-objects.ts';

export const FLAGGER_PROCS = ['flagger'] as const;

/** The version built (its VERSION file beside the binary), or undefined when it is not built. */
export function flaggerVersion(binDir = BIN_DIR): string | undefined {
  const f = join(binDir, 'flagger-dist', 'VERSION');
  return existsSync(f) ? readFileSync(f, 'utf8').trim() : undefined;
}

export async function startFlagger(c: {
  name: string;
  kubeconfig: string;
  port: number;
  logf: (n: string) => string;
}): Promise<ProcRecord> {
  const proc = startProcess(
    'flagger',
    bin('flagger'),
    [
      ...['-kubeconfig', c.kubeconfig, '-mesh-provider', 'kubernetes', '-port', String(c.port)],
      // no Prometheus in the sandbox: a closed port, never a name resolved outside
      ...['-metrics-server', 'http://127.0.0.1:9', '-control-loop-interval', '5s', '-log-level', 'info'],
      ...['-enable-leader-election=false', '-cluster-name', c.name],
    ],
    c.logf('flagger'),
    { KUBECONFIG: c.kubeconfig },
  );
  await waitFor(`${c.name} flagger /healthz`, async () => (await fetch(`http://127.0.0.1:${c.port}/healthz`)).ok, {
    proc,
    timeoutMs: 60_000,
  });
  return proc;
}

/**
 * The Flux Kustomization `payments-staging` (flux/payments, sandbox/seed.ts paymentsFiles) on the cluster that has
 * staging, with the staging business endpoint's URL as its postBuild variable `BUSINESS_URL` (the Canary's
 * webhooks). Applied once the endpoints' ports are known. Per cluster name: its YAML.
 */
export function flaggerAppObjects(endpoints: Record<string, { url: string; cluster: string }>): Record<string, string> {
  const ep = endpoints.staging;
  if (!ep) return {};
  return {
    [ep.cluster]: `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: payments-staging
  namespace: flux-system
  labels:
    env: staging
spec:
  interval: ${SEED_INFRA_INTERVAL}
  retryInterval: 5s
  timeout: 2m
  path: ./flux/payments
  targetNamespace: staging
  prune: true
  wait: false
  sourceRef:
    kind: GitRepository
    name: digital-human
  postBuild:
    substitute:
      BUSINESS_URL: ${ep.url}
`,
  };
}
