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
//
// One cluster's start-up is sandbox/cluster.ts, the GitOps objects it is given sandbox/flux-objects.ts, the admin
// access both use sandbox/cluster-access.ts, and the apiserver's fault injection sandbox/apiserver-faults.ts; this
// module re-exports what callers know it by.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePki } from './pki.ts';
import { alive, stopProcess, tail, waitFor, type ProcRecord } from './procs.ts';
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
import { ARGOCD_PROCS } from './argocd.ts';
import { businessCheckTemplates, ROLLOUTS_PROCS } from './rollouts.ts';
import { FLAGGER_PROCS, flaggerAppObjects } from './flagger.ts';
import { ESO_PROCS } from './eso.ts';
import { chartSourceObjects, pushCharts } from './helm-charts.ts';
import { applyImageAutomation, imageAutomationMissing } from './image-automation.ts';
import type { RegistryState } from './registry.ts';
import { applyPruneAdmissionPolicy } from './identities.ts';
import { applyConsoleRbac, httpsGet, kubeconfigYaml, kubectlRaw } from './cluster-access.ts';
import { startCluster } from './cluster.ts';
import {
  BIN_DIR,
  CONSOLE_KUBECONFIG_PATH,
  KUBECONFIG_PATH,
  REPO_ROOT,
  RUN_DIR,
  STATE_PATH,
  emptyState,
  log,
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
export { appSetObjects, argoObjects, fluxObjects } from './flux-objects.ts';
export { startApiserver, stopApiserver } from './apiserver-faults.ts';

/** Default topology: two independent clusters, each with its own control plane and Flux. */
export const DEFAULT_CLUSTERS: Record<string, string[]> = {
  nonprod: ['dev', 'staging'],
  prod: ['prod'],
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

export { httpsGet as sandboxHttpsGet, ensurePki };
