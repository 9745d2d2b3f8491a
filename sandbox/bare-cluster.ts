// A bare cluster for the contract tier (test/contract/): one etcd and one kube-apiserver per cluster name (each on
// its own etcd prefix), nothing else — no controllers, no nodes, no forge. The same PKI, namespaces, CRDs, console
// RBAC (deploy/rbac.yaml as shipped) and prune admission policy as a sandbox cluster (sandbox/cluster.ts), in a
// directory of its own: never the sandbox's run/ or state.json.
//
// The directory is laid out like a sandbox directory (bin/ and assets/ link to the sandbox's, kubeconfig,
// kubeconfig-console, run/state.json naming these clusters), so a process started with GITOPS_SANDBOX_DIR=<dir>
// finds this cluster through the usual helpers (sandbox/state.ts kubectl(), test/support/kubeconfig.ts) and can
// never reach the real sandbox by mistake. Its processes are this process's children, stopped by stopBareCluster
// (or when this process exits); a directory left by a killed run is cleaned up by the next start.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { apiserverArgs } from './cluster.ts';
import { applyConsoleRbac, httpsGet, kubeconfigYaml } from './cluster-access.ts';
import { applyPruneAdmissionPolicy } from './identities.ts';
import { imageAutomationCrdArgs } from './image-automation.ts';
import { ensureMetricsPki } from './metrics-api.ts';
import { ensurePki } from './pki.ts';
import { alive, freePort, stopProcess, waitFor, type ProcRecord } from './procs.ts';
import { ASSETS_DIR, BIN_DIR, bin, type ClusterState, type SandboxState } from './state.ts';

const execFileP = promisify(execFile);

/** The sandbox's topology by default: nonprod (dev, staging) and prod (prod). */
export const BARE_CLUSTERS: Record<string, string[]> = { nonprod: ['dev', 'staging'], prod: ['prod'] };

export interface BareCluster {
  /** the sandbox-shaped directory (GITOPS_SANDBOX_DIR for processes that use it) */
  dir: string;
  clusters: ClusterState[];
  /** admin, one context per cluster: set-up only */
  adminKubeconfig: string;
  /** the console's own least-privilege identity (user gitops-console), one context per cluster */
  consoleKubeconfig: string;
  procs: ProcRecord[];
}

const OWNER = 'owner.json';
const children = new Set<ChildProcess>();
let exitHook = false;

/** A fresh directory for a bare cluster: `gitops-contract-<pid>-…` under the system's temp directory. */
export function bareClusterDir(): string {
  const dir = join(tmpdir(), `gitops-contract-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Starts etcd, then every cluster's apiserver at once, and applies what a sandbox cluster gets before controllers. */
export async function startBareCluster(
  dir: string,
  topology: Record<string, string[]> = BARE_CLUSTERS,
): Promise<BareCluster> {
  await stopAbandoned();
  mkdirSync(join(dir, 'run', 'clusters'), { recursive: true });
  for (const [link, target] of [
    ['bin', BIN_DIR],
    ['assets', ASSETS_DIR],
  ] as const)
    if (!existsSync(join(dir, link))) symlinkSync(target, join(dir, link));
  const procs: ProcRecord[] = [];
  const bare: BareCluster = {
    dir,
    clusters: [],
    adminKubeconfig: join(dir, 'kubeconfig'),
    consoleKubeconfig: join(dir, 'kubeconfig-console'),
    procs,
  };
  const record = () =>
    writeFileSync(join(dir, OWNER), JSON.stringify({ pid: process.pid, procs: procs.map((p) => p.pid) }));
  try {
    const pki = ensurePki(join(dir, 'pki'));
    const mpki = ensureMetricsPki(pki);
    const [etcdPort, peerPort] = [await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    const etcd = start(dir, 'etcd', [
      ...['--name', 'default', '--data-dir', join(dir, 'etcd')],
      ...['--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl],
      ...['--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `default=${peer}`],
      ...['--unsafe-no-fsync', '--log-level', 'warn'],
    ]);
    procs.push(etcd);
    record();
    await waitFor('bare etcd', async () => (await fetch(`${etcdUrl}/health`)).ok, { proc: etcd, timeoutMs: 30_000 });

    for (const [name, namespaces] of Object.entries(topology)) {
      const cdir = join(dir, 'run', 'clusters', name);
      mkdirSync(cdir, { recursive: true });
      const ports = { apiserver: await freePort() };
      const apiserver = `https://127.0.0.1:${ports.apiserver}`;
      const kubeconfig = join(cdir, 'kubeconfig');
      writeFileSync(kubeconfig, kubeconfigYaml([{ name, server: apiserver, pki, client: 'admin' }], name), {
        mode: 0o600,
      });
      const c: ClusterState = { name, namespaces, dir: cdir, ports, procs: [], apiserver, kubeconfig };
      // the sandbox's apiserver flags, on this cluster's own etcd prefix
      const api = start(cdir, 'kube-apiserver', [
        ...apiserverArgs(c, pki, etcdUrl, mpki),
        ...['--etcd-prefix', `/registry-${name}`],
      ]);
      c.procs.push(etcd, api);
      procs.push(api);
      bare.clusters.push(c);
    }
    record();
    await Promise.all(bare.clusters.map((c) => clusterBasics(c, pki)));

    const entries = bare.clusters.map((c) => ({ name: c.name, server: c.apiserver, pki, client: 'admin' }));
    const first = bare.clusters[0]?.name ?? '';
    writeFileSync(bare.adminKubeconfig, kubeconfigYaml(entries, first), { mode: 0o600 });
    const asConsole = entries.map((e) => ({ ...e, client: 'gitops-console' }));
    writeFileSync(bare.consoleKubeconfig, kubeconfigYaml(asConsole, first), { mode: 0o600 });
    // the state file of this directory (not the sandbox's): kubectl(cluster) in a process that uses the directory
    const state: SandboxState = {
      startedAt: new Date().toISOString(),
      clusters: bare.clusters,
      git: { port: 0, root: '', proc: { name: 'none', pid: 0, cmd: [], log: '', startedAt: '' }, url: '' },
      kubeconfig: bare.adminKubeconfig,
    };
    writeFileSync(join(dir, 'run', 'state.json'), JSON.stringify(state, null, 2));
    return bare;
  } catch (e) {
    await stopBareCluster(bare);
    throw e;
  }
}

/** Namespaces, CRDs, the console's RBAC and the prune admission policy (sandbox/cluster.ts), once /readyz. */
async function clusterBasics(c: ClusterState, pki: ReturnType<typeof ensurePki>): Promise<void> {
  const api = c.procs.find((p) => p.name === 'kube-apiserver');
  await waitFor(
    `${c.name} kube-apiserver /readyz`,
    async () => (await httpsGet(`${c.apiserver}/readyz`, pki)).status === 200,
    {
      ...(api ? { proc: api } : {}),
      timeoutMs: 120_000,
    },
  );
  const k = async (args: string[], input?: string) => {
    const child = execFileP(bin('kubectl'), ['--kubeconfig', c.kubeconfig, ...args], {
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (input !== undefined) child.child.stdin?.end(input);
    return (await child).stdout;
  };
  const apply = ['apply', '--server-side', '--field-manager=sandbox'];
  const nss = ['flux-system', 'argocd', 'argo-rollouts', 'flagger-system', ...c.namespaces];
  await k(
    [...apply, '-f', '-'],
    nss
      .map(
        (n) =>
          `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${n}\n  labels:\n    env: ${c.namespaces.includes(n) ? n : 'system'}\n`,
      )
      .join('---\n'),
  );
  const assets = join(ASSETS_DIR, 'crds');
  await k([
    ...apply,
    ...['-f', join(assets, 'flux'), '-f', join(assets, 'argocd'), '-f', join(assets, 'rollouts')],
    ...['-f', join(assets, 'flagger', 'crd.yaml'), '-f', join(assets, 'eso', 'bundle.yaml')],
    ...imageAutomationCrdArgs(),
  ]);
  applyConsoleRbac(c.kubeconfig);
  await applyPruneAdmissionPolicy(c.kubeconfig, c.namespaces);
  await waitFor(
    `${c.name} CRDs established`,
    async () => {
      const list = JSON.parse(await k(['get', 'crd', '-o', 'json'])) as {
        items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>;
      };
      return list.items.every((x) =>
        x.status?.conditions?.some((y) => y.type === 'Established' && y.status === 'True'),
      );
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  // a custom resource's storage starts (and restarts) after its CRD is established: until then its watches answer
  // 429 "storage is (re)initializing", which a console started at once would report as an unreachable cluster
  const crds = JSON.parse(await k(['get', 'crd', '-o', 'json'])) as {
    items: Array<{
      spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> };
    }>;
  };
  const watches = crds.items.flatMap((x) =>
    x.spec.versions.filter((v) => v.served).map((v) => `/apis/${x.spec.group}/${v.name}/${x.spec.names.plural}`),
  );
  await waitFor(
    `${c.name} custom resources watchable`,
    async () =>
      (
        await Promise.all(
          watches.map(async (w) => (await httpsGet(`${c.apiserver}${w}?watch=1&timeoutSeconds=1`, pki)).status === 200),
        )
      ).every(Boolean),
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

/** Stops the bare cluster's processes and removes its directory. */
export async function stopBareCluster(bare: Pick<BareCluster, 'dir' | 'procs'>): Promise<void> {
  await Promise.all([...bare.procs].reverse().map((p) => stopProcess(p.pid, 3000).catch(() => undefined)));
  for (const c of children) if (bare.procs.some((p) => p.pid === c.pid)) children.delete(c);
  rmSync(bare.dir, { recursive: true, force: true });
}

/** One component as this process's child, in its own process group, its output in `<dir>/<name>.log`. */
function start(dir: string, name: string, args: string[]): ProcRecord {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, 'a');
  try {
    const child = spawn(bin(name), args, { detached: true, stdio: ['ignore', fd, fd] });
    child.on('error', () => undefined);
    child.unref();
    if (!child.pid) throw new Error(`failed to start ${name} (${bin(name)})`);
    children.add(child);
    if (!exitHook) {
      exitHook = true;
      // a run that ends without its teardown (an error, Ctrl-C) takes its bare cluster with it
      process.once('exit', () => {
        for (const c of children) if (c.pid) killGroup(c.pid, 'SIGKILL');
      });
    }
    return { name, pid: child.pid, cmd: [bin(name), ...args], log, startedAt: new Date().toISOString() };
  } finally {
    closeSync(fd);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* gone */
  }
}

/** Bare clusters of runs that died without their teardown (their owner process is gone): stopped, removed. */
async function stopAbandoned(): Promise<void> {
  for (const d of readdirSync(tmpdir()).filter((n) => n.startsWith('gitops-contract-'))) {
    const dir = join(tmpdir(), d);
    try {
      const o = JSON.parse(readFileSync(join(dir, OWNER), 'utf8')) as { pid: number; procs: number[] };
      if (alive(o.pid)) continue;
      for (const pid of o.procs) {
        // only a process of that directory (a pid may have been reused since)
        const cmd = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
        if (cmd.includes(dir)) await stopProcess(pid, 3000).catch(() => undefined);
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* not ours, or being written: left alone */
    }
  }
}
