// External Secrets Operator in a sandbox cluster (issue 26, part 3): its real controller v0.16.2 (built from a copy
// of its module: its go.mod has a replace directive, so `go install` refuses it; sandbox/build.sh), its CRDs from
// the same version, as the ServiceAccount external-secrets/external-secrets with the controller ClusterRole its Helm
// chart ships (deploy/charts/external-secrets/templates/rbac.yaml, written out below with the chart's defaults).
// No webhook and no cert-controller (the CRDs convert with strategy None), no leader election, metrics on
// loopback. Its `fake` provider needs no cloud: the seed's ClusterSecretStore serves the values (sandbox/seed.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess, waitFor, type ProcRecord } from './procs.ts';
import { ASSETS_DIR, BIN_DIR, bin } from './state.ts';

export const ESO_PROCS = ['external-secrets'] as const;

export function esoVersion(binDir = BIN_DIR): string | undefined {
  const f = join(binDir, 'eso-dist', 'VERSION');
  return existsSync(f) ? readFileSync(f, 'utf8').trim() : undefined;
}

/** The chart's controller ClusterRole (its defaults: cluster-wide, cluster stores and push secrets on). */
export function esoRbac(): string {
  if (!existsSync(join(ASSETS_DIR, 'crds', 'eso', 'bundle.yaml'))) return '';
  const rule = (groups: string[], resources: string[], verbs: string[]) =>
    `  - apiGroups: [${groups.map((g) => JSON.stringify(g)).join(', ')}]\n    resources: [${resources.join(', ')}]\n    verbs: [${verbs.join(', ')}]\n`;
  const kinds = [
    'secretstores',
    'clustersecretstores',
    'externalsecrets',
    'clusterexternalsecrets',
    'pushsecrets',
    'clusterpushsecrets',
  ];
  return `apiVersion: v1
kind: Namespace
metadata:
  name: external-secrets
  labels:
    env: system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: external-secrets
  namespace: external-secrets
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: external-secrets-controller
rules:
${rule(['external-secrets.io'], kinds, ['get', 'list', 'watch'])}${rule(
    ['external-secrets.io'],
    kinds.flatMap((k) => [k, `${k}/status`, `${k}/finalizers`]),
    ['get', 'update', 'patch'],
  )}${rule(['generators.external-secrets.io'], ['generatorstates'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'])}${rule(
    ['generators.external-secrets.io'],
    [
      'acraccesstokens',
      'clustergenerators',
      'ecrauthorizationtokens',
      'fakes',
      'gcraccesstokens',
      'githubaccesstokens',
      'quayaccesstokens',
      'passwords',
      'stssessiontokens',
      'uuids',
      'vaultdynamicsecrets',
      'webhooks',
      'grafanas',
    ],
    ['get', 'list', 'watch'],
  )}${rule([''], ['serviceaccounts', 'namespaces', 'configmaps'], ['get', 'list', 'watch'])}${rule([''], ['secrets'], ['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'])}${rule([''], ['serviceaccounts/token'], ['create'])}${rule([''], ['events'], ['create', 'patch'])}${rule(['external-secrets.io'], ['externalsecrets', 'pushsecrets'], ['create', 'update', 'delete'])}---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: external-secrets-controller
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: external-secrets-controller
subjects:
  - kind: ServiceAccount
    name: external-secrets
    namespace: external-secrets
`;
}

export async function startEso(c: {
  name: string;
  kubeconfig: string;
  metricsPort: number;
  logf: (n: string) => string;
}): Promise<ProcRecord> {
  const proc = startProcess(
    'external-secrets',
    bin('external-secrets'),
    [
      // one worker: the fake provider's NewClient writes a map without a lock, and two reconciles at once
      // crashed the operator ("fatal error: concurrent map writes", fake.go:80) during a sandbox start
      ...['--metrics-addr', `127.0.0.1:${c.metricsPort}`, '--enable-leader-election=false', '--concurrent', '1'],
      // a store that fails is re-validated soon (the default is 5 min): the console shows it coming back
      ...['--store-requeue-interval', '10s', '--loglevel', 'info', '--zap-time-encoding', 'iso8601'],
    ],
    c.logf('external-secrets'),
    { KUBECONFIG: c.kubeconfig },
  );
  await waitFor(
    `${c.name} external-secrets metrics`,
    async () => (await fetch(`http://127.0.0.1:${c.metricsPort}/metrics`)).ok,
    { proc, timeoutMs: 60_000 },
  );
  return proc;
}
