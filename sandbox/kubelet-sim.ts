// SIMULATION — a kubelet stand-in for the image pull. kwok runs no containers,
// so its Pods report no `imageID`. This process watches every Pod of every
// sandbox cluster and, once per container, the first time it sees it started
// without an imageID, resolves the container's image at the sandbox registry
// (which mirrors the seed's image host) and writes
// `status.containerStatuses[].imageID` = `<host>/<repo>@sha256:…`, as a
// kubelet reports it after a pull. It never rewrites an imageID: a tag moved
// later shows on the next Pod only, as in a real cluster. Its field manager is
// `sandbox-kubelet-sim`.
//
//   tsx sandbox/kubelet-sim.ts <config.json>    (started by startSandbox)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { kubeRequest, listWatch, type KubeTarget } from './kube-http.ts';
import { startProcess, type ProcRecord } from './procs.ts';
import { parseImageRef, resolveDigest, type RegistryState } from './registry.ts';

export const KUBELET_SIM_MANAGER = 'sandbox-kubelet-sim';

export interface KubeletSimConfig {
  clusters: KubeTarget[];
  registry: Pick<RegistryState, 'url' | 'host' | 'mirrorOf'>;
}

type Json = Record<string, unknown>;

/** Spawns the stand-in as its own process (detached, log file, like the other components). */
export function startKubeletSim(opts: { runDir: string; repoRoot: string; config: KubeletSimConfig }): ProcRecord {
  const cfg = join(opts.runDir, 'kubelet-sim.json');
  writeFileSync(cfg, JSON.stringify(opts.config, null, 2));
  return startProcess(
    'kubelet-sim',
    join(opts.repoRoot, 'node_modules', '.bin', 'tsx'),
    [join(opts.repoRoot, 'sandbox', 'kubelet-sim.ts'), cfg],
    join(opts.runDir, 'kubelet-sim.log'),
  );
}

function run(cfg: KubeletSimConfig): void {
  const say = (m: string) => process.stdout.write(`${new Date().toISOString()} ${m}\n`);
  say(`SIMULATION: kubelet image-pull stand-in for ${cfg.clusters.map((c) => c.cluster).join(', ')}`);
  // `${cluster}/${uid}/${container}` → the imageID reported: a Pod pulls once; if kwok rewrites the
  // container statuses later (its chaos stage does), the same imageID is written again
  const pulled = new Map<string, string>();
  const busy = new Set<string>();
  // pods whose image could not be resolved because the registry or apiserver failed: retried (re-read
  // first) for 10 minutes. An image the registry does not have is not retried (like ErrImagePull).
  const retry = new Map<string, { t: KubeTarget; pod: Json; since: number }>();
  const later = (key: string, t: KubeTarget, pod: Json) =>
    retry.set(key, { t, pod, since: retry.get(key)?.since ?? Date.now() });
  const cache = new Map<string, { digest: string | undefined; at: number }>();

  const resolve = async (image: string): Promise<string | undefined> => {
    const c = cache.get(image);
    // a short cache: many Pods of one rollout resolve once, a moved tag shows within 1.5 s
    // an image the registry does not have (another test's, e.g. the benches') is asked again after 30 s
    if (c && Date.now() - c.at < (c.digest ? 1500 : 30_000)) return c.digest;
    const digest = await resolveDigest(cfg.registry, image);
    cache.set(image, { digest, at: Date.now() });
    return digest;
  };

  const handle = async (t: KubeTarget, pod: Json) => {
    const meta = (pod.metadata ?? {}) as Json;
    const key = `${t.cluster}/${String(meta.uid)}`;
    if (meta.deletionTimestamp) retry.delete(key);
    if (busy.has(key) || meta.deletionTimestamp) return;
    const statuses = (((pod.status ?? {}) as Json).containerStatuses as Json[] | undefined) ?? [];
    const missing = statuses
      .map((s, i) => ({ i, name: String(s.name), image: String(s.image ?? ''), imageID: String(s.imageID ?? '') }))
      .filter((s) => !s.imageID && s.image);
    if (!missing.length) {
      retry.delete(key);
      return; // not started yet, or reported
    }
    busy.add(key);
    try {
      const ops: Json[] = [];
      const ids: Array<[string, string]> = [];
      for (const s of missing) {
        let id = pulled.get(`${key}/${s.name}`);
        if (!id) {
          const digest = await resolve(s.image);
          const p = parseImageRef(s.image);
          if (!digest || !p) continue;
          id = `${p.host}/${p.repo}@${digest}`;
        }
        ids.push([`${key}/${s.name}`, id]);
        ops.push(
          { op: 'test', path: `/status/containerStatuses/${s.i}/name`, value: s.name },
          { op: 'add', path: `/status/containerStatuses/${s.i}/imageID`, value: id },
        );
      }
      if (ops.length) {
        const r = await kubeRequest(
          t,
          'PATCH',
          `/api/v1/namespaces/${String(meta.namespace)}/pods/${String(meta.name)}/status?fieldManager=${KUBELET_SIM_MANAGER}`,
          ops,
          'application/json-patch+json',
        );
        if (r.status === 200) {
          for (const [k, id] of ids) pulled.set(k, id);
          say(
            `${t.cluster} ${String(meta.namespace)}/${String(meta.name)}: imageID ${ids.map((x) => x[1]).join(', ')}`,
          );
        } else if (r.status !== 404 && r.status !== 422) throw new Error(`patch status: HTTP ${r.status}`);
      }
      retry.delete(key);
    } catch (e) {
      // registry or apiserver unreachable: like a kubelet, keep trying
      later(key, t, pod);
      say(`${t.cluster} ${String(meta.namespace)}/${String(meta.name)}: ${(e as Error).message}; will retry`);
    } finally {
      busy.delete(key);
    }
  };

  const ac = new AbortController();
  for (const t of cfg.clusters) {
    listWatch(
      t,
      '/api/v1/pods',
      (pod) => void handle(t, pod),
      (e) => say(`${t.cluster}: ${e.message}`),
      ac.signal,
    );
  }
  setInterval(() => {
    for (const [key, { t, pod, since }] of retry) {
      if (Date.now() - since > 600_000) {
        retry.delete(key);
        continue;
      }
      const meta = (pod.metadata ?? {}) as Json;
      // the Pod as it is now (it may have an imageID by now, or be gone); handle() drops it when done
      kubeRequest(t, 'GET', `/api/v1/namespaces/${String(meta.namespace)}/pods/${String(meta.name)}`).then(
        (r) => {
          if (r.status === 200) void handle(t, r.json);
          else if (r.status === 404) retry.delete(key);
        },
        () => undefined,
      );
    }
    if (pulled.size > 500_000) pulled.clear();
  }, 3000);
  process.on('SIGTERM', () => {
    ac.abort();
    process.exit(0);
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: kubelet-sim.ts <config.json>');
    process.exit(2);
  }
  run(JSON.parse(readFileSync(file, 'utf8')) as KubeletSimConfig);
}
