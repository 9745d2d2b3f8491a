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
//
// A fully set-up cluster is cached (./bare-cluster-cache.ts: etcd's data directory and the PKI, before anything
// else is applied): the next start restarts etcd and the apiservers from a copy, in seconds instead of a minute.
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
import { bareCacheKey, dropBareCache, restoreBareCache, saveBareCache } from './bare-cluster-cache.ts';
import { applyConsoleRbac, httpsGet, kubeconfigYaml } from './cluster-access.ts';
import { applyPruneAdmissionPolicy } from './identities.ts';
import { imageAutomationCrdArgs } from './image-automation.ts';
import { ensureMetricsPki } from './metrics-api.ts';
import { ensurePki } from './pki.ts';
import { alive, freePort, stopProcess, waitFor, type ProcRecord } from './procs.ts';
import { ASSETS_DIR, BIN_DIR, REPO_ROOT, bin, type ClusterState, type SandboxState } from './state.ts';

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
  /** how it started: from the cache, or a full start (and whether that was cached), for the log */
  start: string;
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

/**
 * Starts a bare cluster in `dir`. From the cache (./bare-cluster-cache.ts) when it holds one made of the same
 * binaries and files: etcd and the apiservers on fresh ports, ready once every custom resource can be watched. Else
 * the full start (namespaces, CRDs, RBAC, prune policy); then etcd is stopped cleanly, its data directory and the PKI
 * are cached, and the cluster restarts from them. Any doubt (a copy that fails, an apiserver not ready in time): the
 * full start, said in one line on stderr.
 */
export async function startBareCluster(
  dir: string,
  topology: Record<string, string[]> = BARE_CLUSTERS,
): Promise<BareCluster> {
  await stopAbandoned();
  let key: string;
  try {
    key = bareCacheKey([bin('etcd'), bin('kube-apiserver')], setupFiles(), topology);
  } catch (e) {
    note(`no cache key (${firstLine(e)}): full start, not cached`);
    return { ...(await boot(dir, topology, 'full')), start: 'full start' };
  }
  const cached = restoreBareCache(key, dir);
  if (cached.ok) {
    try {
      return { ...(await boot(dir, topology, 'cached')), start: `from cache ${key}` };
    } catch (e) {
      note(`cache ${key} did not start (${firstLine(e)}): dropped; full start`);
      dropBareCache(key);
    }
  } else note(`${cached.why} (${key}): full start, then cached`);

  const full = await boot(dir, topology, 'full');
  let saved = false;
  try {
    await stopForCache(full);
    saveBareCache(key, dir);
    saved = true;
  } catch (e) {
    note(`not cached (${firstLine(e)})`);
  }
  try {
    return { ...(await boot(dir, topology, 'cached')), start: saved ? `full start, cached as ${key}` : 'full start' };
  } catch (e) {
    note(`restart from its own etcd failed (${firstLine(e)}): full start, not cached`);
    if (saved) dropBareCache(key);
    return { ...(await boot(dir, topology, 'full')), start: 'full start (twice)' };
  }
}

/**
 * etcd and an apiserver per cluster on fresh ports in `dir`. `full`: a new etcd, then everything a sandbox cluster
 * gets before controllers; `cached`: etcd's data directory and the PKI are already in `dir` (no set-up, no new PKI).
 */
async function boot(dir: string, topology: Record<string, string[]>, mode: 'full' | 'cached'): Promise<BareCluster> {
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
    start: mode,
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
    // a cached cluster is set up already: it needs only to serve every custom resource again (a cached start that
    // takes longer than a minute and a half is a doubt: the caller makes a full start instead)
    await Promise.all(
      bare.clusters.map((c) =>
        mode === 'full' ? clusterBasics(c, pki) : ready(c, pki, 90_000).then(() => watchable(c, pki)),
      ),
    );

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

/** The CRD files and directories every cluster gets, as `kubectl apply -f` arguments (hashed for the cache key). */
function crdFiles(): string[] {
  const assets = join(ASSETS_DIR, 'crds');
  return [
    ...[join(assets, 'flux'), join(assets, 'argocd'), join(assets, 'rollouts')],
    ...[join(assets, 'flagger', 'crd.yaml'), join(assets, 'eso', 'bundle.yaml')],
    ...imageAutomationCrdArgs().filter((a) => a !== '-f'),
  ];
}

/** Every file the set-up applies: the CRDs, the console's RBAC (applyConsoleRbac) and the prune policy. */
function setupFiles(): string[] {
  const deploy = ['rbac.yaml', 'rbac-impersonation.yaml', 'prune-admission-policy.yaml'];
  return [...crdFiles(), ...deploy.map((f) => join(REPO_ROOT, 'deploy', f))];
}

type Pki = ReturnType<typeof ensurePki>;

/** Namespaces, CRDs, the console's RBAC and the prune admission policy (sandbox/cluster.ts), once /readyz. */
async function clusterBasics(c: ClusterState, pki: Pki): Promise<void> {
  await ready(c, pki, 120_000);
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
  await k([...apply, ...crdFiles().flatMap((f) => ['-f', f])]);
  applyConsoleRbac(c.kubeconfig);
  await applyPruneAdmissionPolicy(c.kubeconfig, c.namespaces);
  await waitFor(
    `${c.name} CRDs established`,
    async () =>
      (await crds(c, pki)).every((x) =>
        x.status?.conditions?.some((y) => y.type === 'Established' && y.status === 'True'),
      ),
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  await watchable(c, pki);
}

/** The apiserver answers /readyz within `timeoutMs` (or has exited: then at once). */
async function ready(c: ClusterState, pki: Pki, timeoutMs: number): Promise<void> {
  const api = c.procs.find((p) => p.name === 'kube-apiserver');
  await waitFor(
    `${c.name} kube-apiserver /readyz`,
    async () => (await httpsGet(`${c.apiserver}/readyz`, pki)).status === 200,
    { ...(api ? { proc: api } : {}), timeoutMs },
  );
}

interface Crd {
  spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

async function crds(c: ClusterState, pki: Pki): Promise<Crd[]> {
  const r = await httpsGet(`${c.apiserver}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, pki);
  if (r.status !== 200) throw new Error(`list CRDs: HTTP ${r.status}`);
  return (JSON.parse(r.body) as { items: Crd[] }).items;
}

/**
 * Every served version of every custom resource can be watched. A custom resource's storage starts (and restarts)
 * after its CRD is established, and an apiserver's after its start: until then its watches answer 429 "storage is
 * (re)initializing", which a console started at once would report as an unreachable cluster.
 */
async function watchable(c: ClusterState, pki: Pki): Promise<void> {
  const list = await crds(c, pki);
  if (!list.length) throw new Error(`${c.name}: no CRDs`);
  const watches = list.flatMap((x) =>
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

/** Stops the apiservers, then etcd — cleanly (SIGTERM, its data flushed and closed), or throws: no copy of it then. */
async function stopForCache(bare: BareCluster): Promise<void> {
  const [etcd, ...apiservers] = bare.procs;
  await Promise.all(apiservers.map((p) => stopProcess(p.pid, 5000).catch(() => undefined)));
  if (!etcd) throw new Error('no etcd');
  killGroup(etcd.pid, 'SIGTERM');
  const until = Date.now() + 15_000;
  while (alive(etcd.pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  if (alive(etcd.pid)) {
    await stopProcess(etcd.pid, 0);
    throw new Error('etcd did not stop within 15 s of SIGTERM');
  }
  for (const c of children) if (bare.procs.some((p) => p.pid === c.pid)) children.delete(c);
}

function note(line: string): void {
  process.stderr.write(`bare cluster: ${line}\n`);
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
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
