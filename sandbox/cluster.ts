// One sandbox cluster's start-up (startSandbox in sandbox.ts starts each in turn): its PKI and ports, etcd, the
// kube-apiserver (with the aggregation layer), the namespaces, CRDs and the console's RBAC, kube-controller-manager
// and kube-scheduler, kwok and its fake nodes, metrics-server, Flux's controllers (and on the cluster that has dev
// its image automation), Argo CD, Argo Rollouts, Flagger and the External Secrets Operator, each controller as its
// own ServiceAccount; last, once the forge is up, the SOPS key and the GitOps objects (sandbox/flux-objects.ts).
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePki, type ClusterPki } from './pki.ts';
import {
  aggregatorArgs,
  ensureMetricsPki,
  kwokKubeletArgs,
  kwokResourceUsage,
  metricsApiObjects,
  metricsServerArgs,
  type MetricsPki,
} from './metrics-api.ts';
import { freePort, startProcess, waitFor, type ProcRecord } from './procs.ts';
import { argocdConfigObjects, startArgoCd } from './argocd.ts';
import { startRollouts } from './rollouts.ts';
import { startFlagger } from './flagger.ts';
import { ensureAgeKey, sopsKeySecret } from './sops.ts';
import { startEso } from './eso.ts';
import { imageAutomationCrdArgs, runsImageAutomation, startImageAutomation } from './image-automation.ts';
import { applyPruneAdmissionPolicy, ensureControllerIdentities } from './identities.ts';
import { applyConsoleRbac, httpsGet, kubeconfigYaml, kubectlRaw } from './cluster-access.ts';
import { argoObjects, fluxObjects } from './flux-objects.ts';
import {
  ASSETS_DIR,
  BIN_DIR,
  RUN_DIR,
  bin,
  emptyState,
  log,
  readState,
  writeState,
  type ClusterState,
} from './state.ts';

/** `gitUrl`: the forge's clone URL once it is up and seeded (awaited just before the Flux/Argo objects). */
export async function startCluster(name: string, namespaces: string[], gitUrl: Promise<string>): Promise<ClusterState> {
  const dir = join(RUN_DIR, 'clusters', name);
  mkdirSync(dir, { recursive: true });
  const pki = ensurePki(join(dir, 'pki'));
  // the aggregator's front-proxy identity and the serving certs of metrics-server and kwok (sandbox/metrics-api.ts)
  const mpki = ensureMetricsPki(pki);
  const ports: Record<string, number> = {};
  for (const p of [
    'etcd',
    'etcdPeer',
    'apiserver',
    'kcm',
    'scheduler',
    'kwok',
    'srcMetrics',
    'srcHealth',
    'srcStorage',
    'kusMetrics',
    'kusHealth',
    'helmMetrics',
    'helmHealth',
    'metricsServer',
    'argoRedis',
    'argoRepo',
    'argoRepoMetrics',
    'argoCtlMetrics',
    'argoAppsetMetrics',
    'argoAppsetProbe',
    'argoAppsetWebhook',
    'rolloutsMetrics',
    'rolloutsHealthz',
    'flagger',
    'esoMetrics',
  ]) {
    ports[p] = await freePort();
  }
  const procs: ProcRecord[] = [];
  const logf = (n: string) => join(dir, `${n}.log`);
  const apiserver = `https://127.0.0.1:${ports.apiserver}`;
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml([{ name, server: apiserver, pki, client: 'admin' }], name), { mode: 0o600 });
  const state: ClusterState = { name, namespaces, dir, ports, procs, apiserver, kubeconfig };

  log(`${name}: etcd`);
  const etcdUrl = `http://127.0.0.1:${ports.etcd}`;
  const etcd = startProcess(
    'etcd',
    bin('etcd'),
    [
      '--name',
      'default',
      '--data-dir',
      join(dir, 'etcd'),
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      `http://127.0.0.1:${ports.etcdPeer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${ports.etcdPeer}`,
      '--initial-cluster',
      `default=http://127.0.0.1:${ports.etcdPeer}`,
      '--unsafe-no-fsync',
      '--quota-backend-bytes',
      String(4 * 1024 * 1024 * 1024),
      '--log-level',
      'warn',
    ],
    logf('etcd'),
  );
  procs.push(etcd);
  await waitFor(`${name} etcd`, async () => (await fetch(`${etcdUrl}/health`)).ok, { proc: etcd, timeoutMs: 30_000 });

  log(`${name}: kube-apiserver`);
  const api = startProcess(
    'kube-apiserver',
    bin('kube-apiserver'),
    apiserverArgs(state, pki, etcdUrl, mpki),
    logf('kube-apiserver'),
  );
  procs.push(api);
  writeState({
    ...(readState() ?? emptyState()),
    clusters: [...(readState()?.clusters ?? []).filter((c) => c.name !== name), state],
  });
  await waitFor(
    `${name} kube-apiserver /readyz`,
    async () => (await httpsGet(`${apiserver}/readyz`, pki)).status === 200,
    { proc: api, timeoutMs: 90_000 },
  );

  // Cluster basics: namespaces, CRDs, the console's own least-privilege RBAC.
  const k = (args: string[], input?: string) => kubectlRaw(kubeconfig, args, input);
  k(
    ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'],
    ['flux-system', 'argocd', 'argo-rollouts', 'flagger-system', ...namespaces]
      .map(
        (n) =>
          `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${n}\n  labels:\n    env: ${namespaces.includes(n) ? n : 'system'}\n`,
      )
      .join('---\n'),
  );
  k([
    'apply',
    '--server-side',
    '--field-manager=sandbox',
    '-f',
    join(ASSETS_DIR, 'crds', 'flux'),
    '-f',
    join(ASSETS_DIR, 'crds', 'argocd'),
    '-f',
    join(ASSETS_DIR, 'crds', 'rollouts'),
    '-f',
    join(ASSETS_DIR, 'crds', 'flagger', 'crd.yaml'),
    '-f',
    join(ASSETS_DIR, 'crds', 'eso', 'bundle.yaml'),
    // Flux's image automation CRDs (beside their controllers' binaries), on every cluster
    ...imageAutomationCrdArgs(),
  ]);
  applyConsoleRbac(kubeconfig);
  // the controllers' own identities (ServiceAccount tokens), and the console's prune approval enforced by the
  // apiserver for them (deploy/prune-admission-policy.yaml) on the environment namespaces
  // (in the background, while the CRDs settle and the other components start; awaited before Flux starts)
  const identities = ensureControllerIdentities({ name, dir, apiserver, kubeconfig, caCert: pki.caCert });
  const policy = applyPruneAdmissionPolicy(kubeconfig, namespaces);
  for (const p of [identities, policy]) p.catch(() => undefined);
  await waitFor(
    `${name} CRDs established`,
    async () => {
      const crds = JSON.parse(k(['get', 'crd', '-o', 'json'])) as {
        items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>;
      };
      return (
        crds.items.length > 0 &&
        crds.items.every((c) => c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True'))
      );
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );

  log(`${name}: controller-manager, scheduler`);
  // flags both components share: loopback serving, the admin kubeconfig for everything, no leader election
  const component = (serving: string, port: number) => [
    ...[
      '--kubeconfig',
      kubeconfig,
      '--authentication-kubeconfig',
      kubeconfig,
      '--authorization-kubeconfig',
      kubeconfig,
    ],
    ...['--leader-elect=false', '--bind-address', '127.0.0.1', '--secure-port', String(port)],
    ...['--cert-dir', join(dir, serving), '--kube-api-qps', '200', '--kube-api-burst', '400', '-v', '1'],
  ];
  procs.push(
    startProcess(
      'kube-controller-manager',
      bin('kube-controller-manager'),
      [
        ...component('kcm-certs', ports.kcm ?? 0),
        ...['--service-account-private-key-file', pki.saKey, '--root-ca-file', pki.caCert, '--cluster-name', name],
        '--controllers',
        '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller,-persistentvolume-binder,-attachdetach,-persistentvolume-expander,-ephemeral-volume',
        ...['--concurrent-deployment-syncs', '10', '--concurrent-replicaset-syncs', '10'],
      ],
      logf('kube-controller-manager'),
    ),
    startProcess(
      'kube-scheduler',
      bin('kube-scheduler'),
      component('scheduler-certs', ports.scheduler ?? 0),
      logf('kube-scheduler'),
    ),
  );

  log(`${name}: kwok and fake nodes`);
  const stages = readdirSync(join(ASSETS_DIR, 'kwok'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => readFileSync(join(ASSETS_DIR, 'kwok', f), 'utf8').trim())
    .join('\n---\n');
  const kwokConfig = join(dir, 'kwok.yaml');
  writeFileSync(
    kwokConfig,
    `apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions:\n  nodeLeaseDurationSeconds: 40\n  nodeLeaseParallelism: 4\n  podPlayStageParallelism: 8\n  nodePlayStageParallelism: 4\n---\n${stages}\n---\n${kwokResourceUsage()}`,
  );
  procs.push(
    startProcess(
      'kwok',
      bin('kwok'),
      [
        '--kubeconfig',
        kubeconfig,
        '--config',
        kwokConfig,
        '--manage-all-nodes=false',
        '--manage-nodes-with-annotation-selector',
        'kwok.x-k8s.io/node=fake',
        // pod IPs: room for bench:tree's 100,000 kwok pods (a /16 has 65,536)
        '--cidr',
        '10.64.0.1/10',
        // each fake node's kubelet endpoint is kwok itself: InternalIP 127.0.0.1, port and https as below
        ...kwokKubeletArgs(mpki, ports.kwok ?? 0),
        '--server-address',
        `127.0.0.1:${ports.kwok}`,
      ],
      logf('kwok'),
    ),
  );
  const nodes = [1, 2, 3]
    .map(
      (i) => `apiVersion: v1
kind: Node
metadata:
  name: ${name}-node-${i}
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
    metrics.k8s.io/resource-metrics-path: /metrics/nodes/${name}-node-${i}/metrics/resource
  labels:
    kubernetes.io/hostname: ${name}-node-${i}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    topology.kubernetes.io/zone: zone-${i}
status:
  allocatable: {cpu: "640", memory: 2560Gi, pods: "40000"}
  capacity: {cpu: "640", memory: 2560Gi, pods: "40000"}
  nodeInfo: {architecture: amd64, kubeletVersion: fake, operatingSystem: linux}
`,
    )
    .join('---\n');
  k(['apply', '-f', '-'], nodes);

  // the resource metrics API: metrics-server scrapes kwok's kubelet-style /metrics/resource, the aggregator
  // serves it as metrics.k8s.io (sandbox/metrics-api.ts); up before Flux, whose discovery then sees it served
  log(`${name}: metrics-server`);
  const metricsServer = startProcess(
    'metrics-server',
    bin('metrics-server'),
    metricsServerArgs({
      kubeconfig,
      port: ports.metricsServer ?? 0,
      caCert: pki.caCert,
      m: mpki,
      certDir: join(dir, 'metrics-server-certs'),
    }),
    logf('metrics-server'),
  );
  procs.push(metricsServer);
  k(
    ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'],
    metricsApiObjects(ports.metricsServer ?? 0, pki.caCert),
  );

  // flags both Flux controllers share: every namespace, no leader election, loopback-only endpoints
  const fluxFlags = (metrics: number, health: number) => [
    ...['--watch-all-namespaces=true', '--enable-leader-election=false', '--events-addr', ''],
    ...['--metrics-addr', `127.0.0.1:${metrics}`, '--health-addr', `127.0.0.1:${health}`],
    ...['--log-level', 'info', '--requeue-dependency', '5s'],
  ];
  log(
    `${name}: flux source-controller, kustomize-controller, helm-controller${runsImageAutomation(namespaces) ? ', image-reflector-controller, image-automation-controller' : ''}`,
  );
  // each controller as its own ServiceAccount (sandbox/identities.ts), never as the sandbox admin
  const [ids] = await Promise.all([identities, policy]);
  const fluxEnv = (sa: keyof typeof ids) => ({ KUBECONFIG: ids[sa], RUNTIME_NAMESPACE: 'flux-system' });
  const storage = join(dir, 'flux-storage');
  mkdirSync(storage, { recursive: true });
  procs.push(
    startProcess(
      'source-controller',
      bin('source-controller'),
      [
        ...fluxFlags(ports.srcMetrics ?? 0, ports.srcHealth ?? 0),
        '--storage-path',
        storage,
        '--storage-addr',
        `127.0.0.1:${ports.srcStorage}`,
        '--storage-adv-addr',
        `127.0.0.1:${ports.srcStorage}`,
      ],
      logf('source-controller'),
      fluxEnv('source-controller'),
    ),
    startProcess(
      'kustomize-controller',
      bin('kustomize-controller'),
      fluxFlags(ports.kusMetrics ?? 0, ports.kusHealth ?? 0),
      logf('kustomize-controller'),
      fluxEnv('kustomize-controller'),
    ),
    // helm-controller (issue 26): installs the HelmReleases' charts from source-controller's artifacts
    startProcess(
      'helm-controller',
      bin('helm-controller'),
      fluxFlags(ports.helmMetrics ?? 0, ports.helmHealth ?? 0),
      logf('helm-controller'),
      fluxEnv('helm-controller'),
    ),
  );
  // Flux's image automation (issue 26 part 5), on the cluster that has dev only; its objects: applyImageAutomation
  if (runsImageAutomation(namespaces)) procs.push(...(await startImageAutomation({ dir, ports, logf, ids })));
  writeState({
    ...(readState() ?? emptyState()),
    clusters: [...(readState()?.clusters ?? []).filter((c) => c.name !== name), state],
  });

  // Argo CD's controllers (sandbox/argocd.ts): its settings and this cluster as its destination, then the processes
  log(`${name}: argo cd (redis, repo-server, application-controller, applicationset-controller)`);
  k(
    ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'],
    argocdConfigObjects({
      name,
      apiserver,
      caCert: pki.caCert,
      controllerKubeconfig: ids['argocd-application-controller'],
    }),
  );
  procs.push(
    ...(await startArgoCd({
      name,
      dir,
      logf,
      ids,
      ports: {
        redis: ports.argoRedis ?? 0,
        repoServer: ports.argoRepo ?? 0,
        repoMetrics: ports.argoRepoMetrics ?? 0,
        controllerMetrics: ports.argoCtlMetrics ?? 0,
        appsetMetrics: ports.argoAppsetMetrics ?? 0,
        appsetProbe: ports.argoAppsetProbe ?? 0,
        appsetWebhook: ports.argoAppsetWebhook ?? 0,
      },
    })),
  );
  // Argo Rollouts' controller (sandbox/rollouts.ts), as its own ServiceAccount
  log(`${name}: argo rollouts`);
  procs.push(
    await startRollouts({
      name,
      kubeconfig: ids['argo-rollouts'],
      ports: { metrics: ports.rolloutsMetrics ?? 0, healthz: ports.rolloutsHealthz ?? 0 },
      logf,
    }),
  );
  // Flagger (sandbox/flagger.ts), as its own ServiceAccount
  log(`${name}: flagger`);
  procs.push(await startFlagger({ name, kubeconfig: ids.flagger, port: ports.flagger ?? 0, logf }));
  // External Secrets Operator (sandbox/eso.ts), as its own ServiceAccount
  log(`${name}: external-secrets`);
  procs.push(await startEso({ name, kubeconfig: ids['external-secrets'], metricsPort: ports.esoMetrics ?? 0, logf }));
  writeState({
    ...(readState() ?? emptyState()),
    clusters: [...(readState()?.clusters ?? []).filter((c) => c.name !== name), state],
  });

  // the Git source: the forge's repo, seeded (it starts beside the first cluster and is up long before this)
  const url = await gitUrl;
  // SOPS (sandbox/sops.ts): the age key kustomize-controller decrypts the infra Secrets with, as Flux documents it
  k(['apply', '--server-side', '--field-manager=sandbox', '-f', '-'], sopsKeySecret(ensureAgeKey(RUN_DIR, BIN_DIR)));
  k(['apply', '--server-side', '--field-manager=sandbox', '-f', '-'], fluxObjects(namespaces, url));
  k(['apply', '--server-side', '--field-manager=sandbox', '-f', '-'], argoObjects(name, namespaces, url, apiserver));
  return state;
}

export function apiserverArgs(c: ClusterState, pki: ClusterPki, etcdUrl: string, mpki: MetricsPki): string[] {
  return [
    // the aggregation layer: metrics-server's metrics.k8s.io behind the APIService (sandbox/metrics-api.ts)
    ...aggregatorArgs(mpki),
    '--etcd-servers',
    etcdUrl,
    '--bind-address',
    '127.0.0.1',
    '--advertise-address',
    '127.0.0.1',
    '--secure-port',
    String(c.ports.apiserver),
    '--cert-dir',
    join(c.dir, 'apiserver-certs'),
    '--tls-cert-file',
    pki.servingCert,
    '--tls-private-key-file',
    pki.servingKey,
    '--client-ca-file',
    pki.caCert,
    '--authorization-mode',
    'RBAC',
    '--service-account-issuer',
    `https://127.0.0.1:${c.ports.apiserver}`,
    '--service-account-key-file',
    pki.saPub,
    '--service-account-signing-key-file',
    pki.saKey,
    '--service-cluster-ip-range',
    '10.0.0.0/24',
    '--endpoint-reconciler-type',
    'none',
    '--allow-privileged=true',
    '--enable-priority-and-fairness=false',
    '--max-requests-inflight',
    '1000',
    '--max-mutating-requests-inflight',
    '500',
    '--watch-cache=true',
    '-v',
    '1',
  ];
}
