// The sandbox components around the clusters: the forge (Gitea, the Git source
// every cluster's controllers fetch from), the OCI
// registry (Distribution), the kubelet stand-in and the business endpoints.
// startSandbox() starts them with the rest; on reuse of a running sandbox it
// starts the ones that are missing or dead (when their binaries are built),
// without touching the clusters.
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startBusinessEndpoints, type BusinessEndpointsConfig } from './business-endpoint.ts';
import { startForge, stopForge, type ForgeState } from './forge.ts';
import { ensureAgeKey, rememberGeneratedSeed, sopsSeedFiles } from './sops.ts';
import { kubeTarget } from './kube-http.ts';
import { startKubeletSim } from './kubelet-sim.ts';
import { alive, freePort, stopProcess, tail, type ProcRecord } from './procs.ts';
import { startRegistry, stopRegistry, type RegistryState } from './registry.ts';

export interface ExtrasState {
  forge?: ForgeState;
  registry?: RegistryState;
  kubeletSim?: ProcRecord;
  business?: {
    proc: ProcRecord;
    controlDir: string;
    endpoints: Record<string, { url: string; port: number; cluster: string; namespace: string }>;
  };
}

interface Paths {
  runDir: string;
  binDir: string;
  repoRoot: string;
}

interface ClusterLike {
  name: string;
  namespaces: string[];
  apiserver: string;
  dir: string;
}

const log = (msg: string) => {
  if (process.env.SANDBOX_QUIET !== '1')
    process.stderr.write(`[sandbox ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

export const extrasBuilt = (binDir: string) => ({
  forge: existsSync(join(binDir, 'gitea')) && existsSync(join(binDir, 'gitea-static')),
  registry: existsSync(join(binDir, 'registry')) && existsSync(join(binDir, 'imagepush')),
});

const up = (p: ProcRecord | undefined) => !!p && p.pid > 0 && alive(p.pid);

/** Starts (or restarts, on the port it had: the clusters' Git sources name its URL) the sandbox forge. */
export async function startSandboxForge(paths: Paths, port?: number): Promise<ForgeState> {
  const t0 = Date.now();
  const forge = await startForge({
    dir: join(paths.runDir, 'forge'),
    binDir: paths.binDir,
    ...(port ? { port } : {}),
    // the seed's Secrets, encrypted with SOPS for the sandbox's age key (when the Flux tools are built)
    ...(existsSync(join(paths.binDir, 'sops'))
      ? {
          extraSeedFiles: () =>
            rememberGeneratedSeed(paths.runDir, sopsSeedFiles(paths.binDir, ensureAgeKey(paths.runDir, paths.binDir))),
        }
      : {}),
  });
  log(`forge (Gitea ${forge.version}) on ${forge.url} in ${Date.now() - t0} ms`);
  return forge;
}

/** Starts the registry and (unless `forge: false`) the forge (independent of the clusters). */
export async function startServices(
  cur: ExtrasState,
  paths: Paths,
  opts: { require: boolean; forge?: boolean },
): Promise<ExtrasState> {
  const built = extrasBuilt(paths.binDir);
  const next: ExtrasState = { ...cur };
  const tasks: Array<Promise<void>> = [];
  if (!up(cur.registry?.proc)) {
    if (built.registry || opts.require) {
      tasks.push(
        (async () => {
          const t0 = Date.now();
          next.registry = await startRegistry({ dir: join(paths.runDir, 'registry'), binDir: paths.binDir });
          log(`registry on ${next.registry.url} (${next.registry.images.length} images) in ${Date.now() - t0} ms`);
        })(),
      );
    } else log('registry not built (bash sandbox/build.sh registry); skipped');
  }
  if (opts.forge !== false && !up(cur.forge?.proc)) {
    if (built.forge || opts.require) {
      tasks.push(
        (async () => {
          next.forge = await startSandboxForge(paths, cur.forge?.port);
        })(),
      );
    } else log('gitea not built (bash sandbox/build.sh gitea); skipped');
  }
  const results = await Promise.allSettled(tasks);
  const errs = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (errs.length) {
    const msg = errs.map((e) => (e.reason instanceof Error ? e.reason.message : String(e.reason))).join('\n');
    if (opts.require) throw new Error(msg);
    log(`WARNING: ${msg}`);
  }
  return next;
}

/** Starts the kubelet stand-in and the business endpoints (they need the clusters and the registry). */
export async function startSimulations(cur: ExtrasState, paths: Paths, clusters: ClusterLike[]): Promise<ExtrasState> {
  const next: ExtrasState = { ...cur };
  if (cur.registry && !up(cur.kubeletSim)) {
    next.kubeletSim = startKubeletSim({
      runDir: paths.runDir,
      repoRoot: paths.repoRoot,
      config: {
        clusters: clusters.map(kubeTarget),
        registry: { url: cur.registry.url, host: cur.registry.host, mirrorOf: cur.registry.mirrorOf },
      },
    });
  }
  if (!up(cur.business?.proc)) {
    const controlDir = join(paths.runDir, 'business');
    const cfg: BusinessEndpointsConfig = { controlDir, endpoints: [] };
    const endpoints: NonNullable<ExtrasState['business']>['endpoints'] = {};
    for (const c of clusters) {
      const target = kubeTarget(c);
      for (const ns of c.namespaces) {
        // the same port again after a crash, so URLs handed out stay valid
        const port = cur.business?.endpoints[ns]?.port ?? (await freePort());
        cfg.endpoints.push({ env: ns, port, namespace: ns, target });
        endpoints[ns] = { url: `http://127.0.0.1:${port}`, port, cluster: c.name, namespace: ns };
      }
    }
    const proc = startBusinessEndpoints({ runDir: paths.runDir, repoRoot: paths.repoRoot, config: cfg });
    next.business = { proc, controlDir, endpoints };
    // listening is quick; wait so callers can use the URLs at once
    const first = Object.values(endpoints)[0];
    const until = Date.now() + 20_000;
    while (first && Date.now() < until) {
      if (!alive(proc.pid)) {
        // kept in the state: `status` shows it dead with its log tail
        log(`WARNING: business endpoints exited:\n${tail(proc.log)}`);
        break;
      }
      const ok = await fetch(first.url, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.status > 0,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return next;
}

/**
 * On reuse: starts missing or dead extras without touching the clusters. Two
 * test runs may reuse the sandbox at once, so one holds a lock (a directory).
 */
export async function ensureExtras(
  cur: ExtrasState,
  paths: Paths,
  clusters: ClusterLike[],
): Promise<ExtrasState | undefined> {
  const allUp = up(cur.registry?.proc) && up(cur.forge?.proc) && up(cur.kubeletSim) && up(cur.business?.proc);
  const built = extrasBuilt(paths.binDir);
  const wanted =
    (!up(cur.registry?.proc) && built.registry) ||
    (!up(cur.forge?.proc) && built.forge) ||
    (!!cur.registry && !up(cur.kubeletSim)) ||
    !up(cur.business?.proc);
  if (allUp || !wanted) return undefined;
  const lock = join(paths.runDir, 'extras.lock');
  mkdirSync(paths.runDir, { recursive: true });
  const lockAge = () => {
    const s = statSync(lock, { throwIfNoEntry: false });
    return s ? Date.now() - s.mtimeMs : undefined;
  };
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // another process is starting them: wait for it, then the caller re-reads the state.
      // A lock older than 5 minutes is left over from a crash.
      const age = lockAge();
      if (age === undefined) continue;
      if (age > 300_000) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      for (let a = lockAge(); a !== undefined && a < 300_000; a = lockAge())
        await new Promise((r) => setTimeout(r, 500));
      return undefined;
    }
  }
  try {
    log('starting the sandbox components that are missing (forge, registry, simulations)');
    let next = await startServices(cur, paths, { require: false });
    next = await startSimulations(next, paths, clusters);
    return next;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export function extrasProcs(st: ExtrasState): ProcRecord[] {
  return [st.registry?.proc, st.forge?.proc, st.kubeletSim, st.business?.proc].filter((p): p is ProcRecord => !!p);
}

export async function stopExtras(st: ExtrasState): Promise<void> {
  await Promise.all([
    st.kubeletSim && st.kubeletSim.pid > 0 ? stopProcess(st.kubeletSim.pid, 2000) : undefined,
    st.business && st.business.proc.pid > 0 ? stopProcess(st.business.proc.pid, 2000) : undefined,
    st.forge ? stopForge(st.forge) : undefined,
    st.registry ? stopRegistry(st.registry) : undefined,
  ]);
}
