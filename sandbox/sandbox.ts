// The sandbox: real control planes on 127.0.0.1, built from Go modules.
//
//   etcd → kube-apiserver → kube-controller-manager + kube-scheduler → kwok
//   (fake nodes, so pods run) → metrics-server (metrics.k8s.io from kwok's kubelet metrics, for the HPA:
//   sandbox/metrics-api.ts) → Flux source-controller + kustomize-controller + helm-controller, and on the
//   cluster that has dev its image-reflector-controller + image-automation-controller (sandbox/image-automation.ts)
//   (each as its own ServiceAccount: sandbox/identities.ts; the console's prune admission policy installed)
//   plus the forge (Gitea, sandbox/forge.ts) shared by every cluster: the Flux GitRepositories and Argo CD
//   Applications fetch its public repo anonymously; `state.git` names that repo (its clone URL).
//
// startSandbox()/stopSandbox() are used by tests' global setup and by
// `npm run sandbox -- up|down|status|reset`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
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
import { alive, freePort, startProcess, stopProcess, tail, waitFor, type ProcRecord } from './procs.ts';
import {
  ensureExtras,
  extrasProcs,
  startSandboxForge,
  startServices,
  startSimulations,
  stopExtras,
  type ExtrasState,
} from './extras.ts';
import { forgeGitState as gitOf } from './forge.ts';
import { ARGOCD_PROCS, argocdConfigObjects, startArgoCd } from './argocd.ts';
import { businessCheckTemplates, ROLLOUTS_PROCS, startRollouts } from './rollouts.ts';
import { FLAGGER_PROCS, flaggerAppObjects, startFlagger } from './flagger.ts';
import { ensureAgeKey, sopsKeySecret, SOPS_KEY_SECRET } from './sops.ts';
import { ESO_PROCS, startEso } from './eso.ts';
import { chartSourceObjects, pushCharts } from './helm-charts.ts';
import {
  applyImageAutomation,
  imageAutomationCrdArgs,
  imageAutomationMissing,
  runsImageAutomation,
  startImageAutomation,
} from './image-automation.ts';
import type { RegistryState } from './registry.ts';
import { applyPruneAdmissionPolicy, ensureControllerIdentities } from './identities.ts';
import {
  ASSETS_DIR,
  BIN_DIR,
  CONSOLE_KUBECONFIG_PATH,
  KUBECONFIG_PATH,
  REPO_ROOT,
  RUN_DIR,
  STATE_PATH,
  bin,
  mustState,
  readState,
  writeState,
  type ClusterState,
  type SandboxState,
} from './state.ts';

// the shared basics, for callers that know the sandbox by this module
export {
  ASSETS_DIR,
  BIN_DIR,
  CONSOLE_KUBECONFIG_PATH,
  KUBECONFIG_PATH,
  REPO_ROOT,
  RUN_DIR,
  SANDBOX_DIR,
  bin,
  kubectl,
  mustState,
  readState,
} from './state.ts';
export type { ClusterState, SandboxState } from './state.ts';

/** Default topology: two independent clusters, each with its own control plane and Flux. */
export const DEFAULT_CLUSTERS: Record<string, string[]> = {
  nonprod: ['dev', 'staging'],
  prod: ['prod'],
};

const log = (msg: string) => {
  if (process.env.SANDBOX_QUIET !== '1')
    process.stderr.write(`[sandbox ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

/** Builds (or finds cached) binaries and assets. */
export function buildSandbox(): void {
  const r = spawnSync('bash', [join(REPO_ROOT, 'sandbox', 'build.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status === 3) throw new Error('sandbox prerequisites missing (see message above)');
  if (r.status !== 0) throw new Error(`sandbox build failed (exit ${r.status})`);
}

/** buildSandbox, asynchronously, with each output line passed on (and still written to stderr). */
export function buildSandboxStreaming(onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(REPO_ROOT, 'sandbox', 'build.sh')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = (chunk: Buffer, out: NodeJS.WriteStream) => {
      out.write(chunk);
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) onLine(l);
    };
    child.stdout.on('data', (c: Buffer) => lines(c, process.stdout));
    child.stderr.on('data', (c: Buffer) => lines(c, process.stderr));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else if (code === 3) reject(new Error('sandbox prerequisites missing (see message above)'));
      else reject(new Error(`sandbox build failed (exit ${code})`));
    });
  });
}

function httpsGet(url: string, pki: ClusterPki, client = 'admin'): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const c = pki.clients[client];
    if (!c) throw new Error(`no client ${client}`);
    const req = request(
      url,
      { ca: readFileSync(pki.caCert), cert: readFileSync(c.cert), key: readFileSync(c.key), timeout: 5000 },
      (r) => {
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      },
    );
    req.on('error', rej);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

function kubeconfigYaml(
  entries: Array<{ name: string; server: string; pki: ClusterPki; client: string }>,
  current: string,
): string {
  const b64 = (f: string) => readFileSync(f).toString('base64');
  const clusters = entries
    .map(
      (e) =>
        `- name: ${e.name}\n  cluster:\n    server: ${e.server}\n    certificate-authority-data: ${b64(e.pki.caCert)}\n`,
    )
    .join('');
  const users = entries
    .map((e) => {
      const c = e.pki.clients[e.client];
      if (!c) throw new Error(`missing client ${e.client}`);
      return `- name: ${e.name}-${e.client}\n  user:\n    client-certificate-data: ${b64(c.cert)}\n    client-key-data: ${b64(c.key)}\n`;
    })
    .join('');
  const contexts = entries
    .map((e) => `- name: ${e.name}\n  context:\n    cluster: ${e.name}\n    user: ${e.name}-${e.client}\n`)
    .join('');
  return `apiVersion: v1\nkind: Config\nclusters:\n${clusters}users:\n${users}contexts:\n${contexts}current-context: ${current}\npreferences: {}\n`;
}

/** `gitUrl`: the forge's clone URL once it is up and seeded (awaited just before the Flux/Argo objects). */
async function startCluster(name: string, namespaces: string[], gitUrl: Promise<string>): Promise<ClusterState> {
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

/**
 * The Helm chart in the registry and the HelmRepository naming the registry's current address, on every cluster
 * (sandbox/helm-charts.ts). A failure is reported, not fatal: only the HelmRelease depends on it.
 */
function applyChartSources(clusters: ClusterState[], registry: RegistryState | undefined): void {
  if (!registry) return;
  try {
    pushCharts({ binDir: BIN_DIR, registryDir: registry.dir, host: registry.host });
    for (const c of clusters)
      kubectlRaw(
        c.kubeconfig,
        ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'],
        chartSourceObjects(registry.host),
      );
  } catch (e) {
    log(`WARNING: helm charts: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Whether the aggregator reports metrics-server's APIService Available. */
function metricsApiAvailable(kubeconfig: string): boolean {
  const a = JSON.parse(kubectlRaw(kubeconfig, ['get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'json'])) as {
    status?: { conditions?: Array<{ type: string; status: string }> };
  };
  return !!a.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
}

/** The console's RBAC exactly as shipped in deploy/ (re-applied on reuse, so an edited file takes effect). */
function applyConsoleRbac(kubeconfig: string): void {
  for (const f of ['rbac.yaml', 'rbac-impersonation.yaml'])
    kubectlRaw(kubeconfig, [
      ...['apply', '--server-side', '--field-manager=sandbox', '--force-conflicts'],
      ...['-f', join(REPO_ROOT, 'deploy', f)],
    ]);
}

function kubectlRaw(kubeconfig: string, args: string[], input?: string): string {
  try {
    return execFileSync(bin('kubectl'), ['--kubeconfig', kubeconfig, ...args], {
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 60_000,
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${err.stderr?.trim() || err.message}`);
  }
}

function apiserverArgs(c: ClusterState, pki: ClusterPki, etcdUrl: string, mpki: MetricsPki): string[] {
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

export function fluxObjects(namespaces: string[], gitUrl: string): string {
  const docs = [
    `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: digital-human
  namespace: flux-system
spec:
  url: ${gitUrl}
  interval: 10s
  timeout: 20s
  ref:
    branch: main
`,
  ];
  /** one of the environment's Kustomizations on the seed repository; `spec` adds its own lines (2-space indent) */
  const kustomization = (
    name: string,
    env: string,
    path: string,
    spec: string,
  ) => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ${name}
  namespace: flux-system
  labels:
    env: ${env}
spec:
  interval: 15s
  retryInterval: 5s
  timeout: 2m
  path: ${path}
  wait: false
${spec}  sourceRef:
    kind: GitRepository
    name: digital-human
`;
  for (const env of namespaces) {
    // infra first: the environment's platform objects (seed.ts infraFiles), its Secrets decrypted with the
    // sandbox's age key (sops.ts); the app depends on it (issue 26)
    docs.push(
      kustomization(
        `infra-${env}`,
        env,
        `./infra/${env}`,
        `  prune: true\n  decryption:\n    provider: sops\n    secretRef:\n      name: ${SOPS_KEY_SECRET}\n`,
      ),
      kustomization(
        `digital-human-${env}`,
        env,
        `./overlays/${env}`,
        `  prune: ${env === 'prod' ? 'false' : 'true'}\n  dependsOn:\n    - name: infra-${env}\n`,
      ),
    );
  }
  return docs.join('---\n');
}

export function argoObjects(cluster: string, namespaces: string[], gitUrl: string, server: string): string {
  const env = namespaces.includes('staging') ? 'staging' : (namespaces[0] ?? cluster);
  return `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  namespace: argocd
spec:
  sourceRepos: ['*']
  destinations:
    - namespace: '*'
      server: '*'
  clusterResourceWhitelist:
    - group: '*'
      kind: '*'
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: edge-gateway-${env}
  namespace: argocd
  labels:
    env: ${env}
spec:
  project: default
  source:
    repoURL: ${gitUrl}
    targetRevision: main
    path: argo/edge-gateway
  destination:
    server: ${server}
    namespace: ${env}
  syncPolicy:
    automated:
      prune: ${env === 'prod' ? 'false' : 'true'}
      selfHeal: true${
        // both of Argo CD's apply modes are seeded: prod applies server-side (field manager argocd-controller,
        // Apply), the others client-side (kubectl apply's last-applied annotation, argocd-controller, Update)
        env === 'prod' ? '\n    syncOptions:\n      - ServerSideApply=true' : ''
      }
${
  // sync phases and waves (sandbox/seed.ts ledgerFiles): PreSync migration, wave 0 config, wave 1 workloads,
  // PostSync smoke test
  env === 'staging'
    ? `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ledger-staging
  namespace: argocd
  labels:
    env: staging
spec:
  project: default
  source:
    repoURL: ${gitUrl}
    targetRevision: main
    path: argo/ledger
  destination:
    server: ${server}
    namespace: staging
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: checkout-staging
  namespace: argocd
  labels:
    env: staging
spec:
  project: default
  source:
    repoURL: ${gitUrl}
    targetRevision: main
    path: argo/checkout
  destination:
    server: ${server}
    namespace: staging
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
---
${appSetObjects(gitUrl, server)}`
    : ''
}`;
}

/**
 * The seeded ApplicationSets (nonprod; issue 24): `web`, a Git directory generator over argo/web/* (one
 * Application per environment directory, prod excluded: it is the prod cluster's), and `tenants`, a list
 * generator (one Application per element, kustomize name prefix). Their shrink is held by the console's admission
 * policy (deploy/prune-admission-policy.yaml gitops-console-appset-shrink).
 */
export function appSetObjects(gitUrl: string, server: string): string {
  const policy = `  syncPolicy:
        automated:
          prune: true
          selfHeal: true`;
  return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: web
  namespace: argocd
spec:
  generators:
    - git:
        repoURL: ${gitUrl}
        revision: main
        requeueAfterSeconds: 15
        directories:
          - path: argo/web/*
          - path: argo/web/prod
            exclude: true
  template:
    metadata:
      name: 'web-{{path.basename}}'
      labels:
        env: '{{path.basename}}'
    spec:
      project: default
      source:
        repoURL: ${gitUrl}
        targetRevision: main
        path: '{{path}}'
      destination:
        server: ${server}
        namespace: '{{path.basename}}'
    ${policy}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: tenants
  namespace: argocd
spec:
  generators:
    - list:
        elements:
          - tenant: alpha
          - tenant: beta
          - tenant: gamma
  template:
    metadata:
      name: 'tenant-{{tenant}}'
      labels:
        env: staging
    spec:
      project: default
      source:
        repoURL: ${gitUrl}
        targetRevision: main
        path: argo/tenant
        kustomize:
          namePrefix: '{{tenant}}-'
      destination:
        server: ${server}
        namespace: staging
    ${policy}
`;
}

function emptyState(): SandboxState {
  return {
    startedAt: new Date().toISOString(),
    clusters: [],
    git: { port: 0, root: '', proc: { name: 'gitea', pid: 0, cmd: [], log: '', startedAt: '' }, url: '' },
    kubeconfig: KUBECONFIG_PATH,
  };
}

export interface StartOptions {
  clusters?: Record<string, string[]>;
  /** reuse a running, healthy sandbox instead of restarting it */
  reuse?: boolean;
  /** wait until every Flux Kustomization is Ready and Argo apps are synced */
  waitReady?: boolean;
  /** each line of the build's output (the start-up page follows the first build with it) */
  onBuildLine?: (line: string) => void;
}

export async function startSandbox(opts: StartOptions = {}): Promise<SandboxState> {
  const topology = opts.clusters ?? DEFAULT_CLUSTERS;
  if (opts.reuse !== false) {
    const st = readState();
    if (st && (await sandboxHealthy(st)) && sameTopology(st, topology)) {
      log('reusing the running sandbox');
      for (const c of st.clusters) {
        applyConsoleRbac(c.kubeconfig);
        await applyPruneAdmissionPolicy(c.kubeconfig, c.namespaces);
      }
      // the forge, registry and simulations: start the ones missing from an older or partly dead sandbox
      try {
        const more = await ensureExtras(st as SandboxState & ExtrasState, extrasPaths(), st.clusters);
        if (more) writeState({ ...(readState() ?? st), ...more, ...(more.forge ? { git: gitOf(more.forge) } : {}) });
        const now = readState() as (SandboxState & ExtrasState) | undefined;
        applyChartSources(st.clusters, now?.registry);
        applyImageAutomation(st.clusters, now?.registry, now?.forge);
      } catch (e) {
        log(`WARNING: forge/registry/simulations: ${e instanceof Error ? e.message : String(e)}`);
      }
      return readState() ?? st;
    }
  }
  await stopSandbox();
  const t0 = Date.now();
  if (opts.onBuildLine) await buildSandboxStreaming(opts.onBuildLine);
  else buildSandbox();
  rmSync(RUN_DIR, { recursive: true, force: true });
  mkdirSync(RUN_DIR, { recursive: true });
  writeState(emptyState());
  // The forge is the clusters' Git source: it starts (and is seeded) beside the first cluster, whose Flux/Argo
  // objects wait for it. Its state is written as soon as it is up, so a failed start-up still stops it.
  const forgeStarted = startSandboxForge(extrasPaths()).then((forge) => {
    writeState({ ...(readState() ?? emptyState()), git: gitOf(forge), forge } as SandboxState);
    return forge;
  });
  const gitUrl = forgeStarted.then((f) => f.repo.cloneUrl);
  gitUrl.catch(() => undefined); // awaited by startCluster; a failure is thrown there
  // the registry starts beside the clusters too (its own process, mostly idle CPU)
  const servicesStarted = startServices({}, extrasPaths(), { require: false, forge: false }).then(
    (v) => ({ v }),
    (e: unknown) => ({ e }),
  );
  const clusters: ClusterState[] = [];
  // Clusters start one after the other: two cores, and each apiserver start is CPU-bound.
  for (const [name, nss] of Object.entries(topology)) {
    clusters.push(await startCluster(name, nss, gitUrl));
  }
  const forge = await forgeStarted;
  const entries = clusters.map((c) => ({
    name: c.name,
    server: c.apiserver,
    pki: ensurePki(join(c.dir, 'pki')),
    client: 'admin',
  }));
  writeFileSync(KUBECONFIG_PATH, kubeconfigYaml(entries, clusters[0]?.name ?? ''), { mode: 0o600 });
  // A second kubeconfig with the console's own least-privilege identity (deploy/rbac.yaml).
  writeFileSync(
    CONSOLE_KUBECONFIG_PATH,
    kubeconfigYaml(
      entries.map((e) => ({ ...e, client: 'gitops-console' })),
      clusters[0]?.name ?? '',
    ),
    { mode: 0o600 },
  );
  const services = await servicesStarted;
  let extras: ExtrasState = { ...('v' in services ? services.v : {}), forge };
  if ('e' in services) log(`WARNING: registry: ${String(services.e)}`);
  applyChartSources(clusters, extras.registry);
  // the image automation's objects, naming the registry's port of this start (sandbox/image-automation.ts)
  applyImageAutomation(clusters, extras.registry, forge);
  try {
    extras = await startSimulations(extras, extrasPaths(), clusters);
  } catch (e) {
    log(`WARNING: kubelet stand-in / business endpoints: ${e instanceof Error ? e.message : String(e)}`);
  }
  // the canaries' business check against those endpoints (sandbox/rollouts.ts)
  const checks = businessCheckTemplates(extras.business?.endpoints ?? {});
  for (const c of clusters)
    if (checks[c.name])
      kubectlRaw(c.kubeconfig, ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'], checks[c.name]);
  // the Flagger canary's app, its webhooks on the staging endpoint (sandbox/flagger.ts)
  const flaggerApps = flaggerAppObjects(extras.business?.endpoints ?? {});
  for (const c of clusters)
    if (flaggerApps[c.name])
      kubectlRaw(c.kubeconfig, ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'], flaggerApps[c.name]);
  const state: SandboxState & ExtrasState = {
    startedAt: new Date().toISOString(),
    clusters,
    git: gitOf(forge),
    kubeconfig: KUBECONFIG_PATH,
    ...extras,
  };
  writeState(state);
  if (opts.waitReady !== false) {
    const { waitForAllReady } = await import('./scenario.ts');
    await waitForAllReady(state);
    // the metrics API the HPAs read (sandbox/metrics-api.ts): served by now in a healthy start; late is reported
    for (const c of clusters)
      await waitFor(`${c.name} metrics.k8s.io available`, async () => metricsApiAvailable(c.kubeconfig), {
        timeoutMs: 60_000,
        intervalMs: 500,
      }).catch((e: unknown) => log(`WARNING: ${e instanceof Error ? e.message : String(e)}`));
  }
  // a component that died during start-up is reported with its log tail, never hidden
  const statuses = await sandboxStatus(state);
  // the registry and simulations are not needed by the clusters: a failed one is reported, not fatal;
  // the forge is their Git source
  const needed = (c: ComponentStatus) => !c.extra || c.component === 'gitea';
  for (const d of statuses.filter((c) => !c.ok && !needed(c)))
    log(`WARNING: sandbox component ${d.component} exited; last log lines:\n${d.logTail ?? ''}`);
  const dead = statuses.filter((c) => !c.ok && needed(c));
  if (dead.length) {
    throw new Error(
      dead
        .map((d) => `sandbox component ${d.component} (${d.cluster}) exited; last log lines:\n${d.logTail ?? ''}`)
        .join('\n'),
    );
  }
  log(`sandbox up in ${((Date.now() - t0) / 1000).toFixed(1)}s; kubeconfig: ${KUBECONFIG_PATH}`);
  return state;
}

function sameTopology(st: SandboxState, t: Record<string, string[]>): boolean {
  const names = Object.keys(t).sort().join(',');
  return (
    st.clusters
      .map((c) => c.name)
      .sort()
      .join(',') === names
  );
}

async function sandboxHealthy(st: SandboxState): Promise<boolean> {
  // a sandbox from before the forge was the clusters' Git source (a plain git server) is started afresh
  const forge = (st as SandboxState & ExtrasState).forge;
  if (!forge || st.git.url !== forge.repo.cloneUrl) return false;
  // a sandbox from before the metrics API (no metrics-server, apiserver without the aggregator's flags) too
  if (st.clusters.some((c) => !c.procs.some((p) => p.name === 'metrics-server'))) return false;
  // a sandbox from before the real Argo CD (its status was simulated) too
  if (st.clusters.some((c) => !ARGOCD_PROCS.every((n) => c.procs.some((p) => p.name === n)))) return false;
  // and one from before Argo Rollouts
  if (st.clusters.some((c) => !ROLLOUTS_PROCS.every((n) => c.procs.some((p) => p.name === n)))) return false;
  // and one from before Flagger
  if (st.clusters.some((c) => !FLAGGER_PROCS.every((n) => c.procs.some((p) => p.name === n)))) return false;
  // and one from before the External Secrets Operator
  if (st.clusters.some((c) => !ESO_PROCS.every((n) => c.procs.some((p) => p.name === n)))) return false;
  // and one from before Flux's helm-controller
  if (st.clusters.some((c) => !c.procs.some((p) => p.name === 'helm-controller'))) return false;
  // and one from before Flux's image automation (on the cluster that has dev)
  if (imageAutomationMissing(st.clusters)) return false;
  const s = await sandboxStatus(st);
  // a dead forge/registry/simulation is restarted on its own (ensureExtras), not with the clusters
  return s.every((c) => c.ok || c.extra);
}

const extrasPaths = () => ({ runDir: RUN_DIR, binDir: BIN_DIR, repoRoot: REPO_ROOT });

export interface ComponentStatus {
  cluster: string;
  component: string;
  pid: number;
  ok: boolean;
  logTail?: string;
  /** forge, registry, kubelet stand-in, business endpoints (started again on reuse when dead) */
  extra?: boolean;
}

export async function sandboxStatus(st = readState()): Promise<ComponentStatus[]> {
  if (!st) return [];
  const out: ComponentStatus[] = [];
  const procs: Array<[string, ProcRecord]> = [
    // the plain git server of a sandbox started by an older version (now state.git is the forge's repo)
    ...(st.git.proc.name === 'gitserver' ? [['-', st.git.proc] as [string, ProcRecord]] : []),
    ...st.clusters.flatMap((c) => c.procs.map((p): [string, ProcRecord] => [c.name, p])),
  ];
  for (const [cluster, p] of procs) {
    const ok = p.pid > 0 && alive(p.pid);
    out.push({ cluster, component: p.name, pid: p.pid, ok, ...(ok ? {} : { logTail: tail(p.log, 15) }) });
  }
  for (const p of extrasProcs(st as SandboxState & ExtrasState)) {
    const ok = p.pid > 0 && alive(p.pid);
    out.push({
      cluster: '-',
      component: p.name,
      pid: p.pid,
      ok,
      extra: true,
      ...(ok ? {} : { logTail: tail(p.log, 15) }),
    });
  }
  return out;
}

export async function stopSandbox(): Promise<void> {
  const st = readState();
  if (!st) return;
  await stopExtras(st as SandboxState & ExtrasState);
  const procs = [
    ...st.clusters.flatMap((c) => [...c.procs].reverse()),
    // an older sandbox's plain git server (state.git.proc is otherwise the forge's, stopped with the extras)
    ...(st.git.proc.name === 'gitserver' ? [st.git.proc] : []),
  ];
  await Promise.all(procs.filter((p) => p.pid > 0).map((p) => stopProcess(p.pid)));
  rmSync(STATE_PATH, { force: true });
}

export async function resetSandbox(): Promise<void> {
  await stopSandbox();
  rmSync(RUN_DIR, { recursive: true, force: true });
  rmSync(KUBECONFIG_PATH, { force: true });
}

// ---- fault injection on the apiserver (used by tests and demos) ----

export async function stopApiserver(cluster: string): Promise<void> {
  const st = mustState();
  const c = st.clusters.find((x) => x.name === cluster);
  const p = c?.procs.find((x) => x.name === 'kube-apiserver');
  if (!c || !p) throw new Error(`no apiserver for cluster ${cluster}`);
  await stopProcess(p.pid, 3_000);
}

export async function startApiserver(cluster: string): Promise<void> {
  const st = mustState();
  const c = st.clusters.find((x) => x.name === cluster);
  const idx = c?.procs.findIndex((x) => x.name === 'kube-apiserver') ?? -1;
  const old = c?.procs[idx];
  if (!c || !old) throw new Error(`no apiserver for cluster ${cluster}`);
  const pki = ensurePki(join(c.dir, 'pki'));
  if (alive(old.pid)) {
    const ready = await httpsGet(`${c.apiserver}/readyz`, pki).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return;
    // still shutting down (or wedged): finish it before starting the next one
    await stopProcess(old.pid, 2_000);
  }
  const next = startProcess('kube-apiserver', old.cmd[0] ?? bin('kube-apiserver'), old.cmd.slice(1), old.log);
  c.procs[idx] = next;
  writeState(st);
  await waitFor(
    `${cluster} kube-apiserver /readyz`,
    async () => (await httpsGet(`${c.apiserver}/readyz`, pki)).status === 200,
    { proc: next, timeoutMs: 90_000 },
  );
}

export { httpsGet as sandboxHttpsGet, ensurePki };
