// Synchronous requests to a sandbox apiserver from the scenario helpers, without a kubectl process per call.
//
// The helpers (`kubectl(cluster, args)` in state.ts and those built on it) are synchronous, and about 250 test
// call sites depend on that. Each kubectl process costs 0.15 core-seconds of Go start-up, and blocks the test's
// process (and the console under test in it) while it runs: over one integration tier, 1,326 calls and 248
// core-seconds (docs/develop/testing-measured.md, "Measured"). Here a worker thread (kube-sync-worker.mjs) makes the request with
// a keep-alive connection while the caller waits on Atomics.wait: the same synchronous API at a few milliseconds
// a call. Node's own primitives (worker_threads, Atomics, receiveMessageOnPort) are enough; no dependency.
//
// kubectl-fast.ts maps the kubectl commands the tests use onto these requests; anything else still runs kubectl.
import { readFileSync } from 'node:fs';
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { parse } from 'yaml';

type Json = Record<string, unknown>;

interface Tls {
  ca: string;
  cert?: string;
  key?: string;
}

export interface KubeTarget {
  server: string;
  tls: Tls;
  /** a ServiceAccount's bearer token, instead of a client certificate */
  token?: string;
}

interface Answer {
  status?: number;
  body?: string;
  error?: string;
}

let channel: { worker: Worker; port: MessagePort; signal: Int32Array } | undefined;

function transport() {
  if (channel) return channel;
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('./kube-sync-worker.mjs', import.meta.url), {
    workerData: { signal: signal.buffer, port: port2 },
    transferList: [port2],
  });
  // never keeps a test process alive
  worker.unref();
  channel = { worker, port: port1, signal };
  return channel;
}

/** One HTTPS request, waited for synchronously. A transport failure (refused, reset, timeout) throws. */
export function requestSync(
  target: KubeTarget,
  method: string,
  path: string,
  opts: { body?: string; contentType?: string; accept?: string; timeoutMs?: number } = {},
): { status: number; body: string } {
  const t = transport();
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const headers: Record<string, string> = {
    accept: opts.accept ?? 'application/json',
    'user-agent': 'gitops-console-scenario',
  };
  if (opts.contentType) headers['content-type'] = opts.contentType;
  if (target.token) headers.authorization = `Bearer ${target.token}`;
  Atomics.store(t.signal, 0, 0);
  t.port.postMessage({ method, url: target.server + path, headers, body: opts.body, tls: target.tls, timeoutMs });
  const deadline = Date.now() + timeoutMs + 5_000;
  while (Atomics.load(t.signal, 0) === 0) {
    const left = deadline - Date.now();
    if (left <= 0 || Atomics.wait(t.signal, 0, 0, left) === 'timed-out')
      throw new Error(`${method} ${path}: no answer from ${target.server}`);
  }
  const got = receiveMessageOnPort(t.port)?.message as Answer | undefined;
  if (!got || got.error !== undefined || got.status === undefined)
    throw new Error(`${method} ${path}: ${got?.error ?? 'no answer'} (${target.server})`);
  return { status: got.status, body: got.body ?? '' };
}

const targets = new Map<string, KubeTarget | undefined>();

/** The server and client certificate of a kubeconfig's current context (inline data or files). */
export function targetOf(kubeconfigPath: string): KubeTarget | undefined {
  // keyed by the file's text: a restarted sandbox writes new ports and certificates to the same path
  const text = readFileSync(kubeconfigPath, 'utf8');
  if (targets.has(text)) return targets.get(text);
  const t = parseTarget(text);
  targets.set(text, t);
  return t;
}

function parseTarget(text: string): KubeTarget | undefined {
  const kc = parse(text) as Json;
  const named = (list: unknown, name: unknown) =>
    (list as Array<Json> | undefined)?.find((e) => e.name === name) as Json | undefined;
  const ctx = named(kc.contexts, kc['current-context'])?.context as Json | undefined;
  const cluster = named(kc.clusters, ctx?.cluster)?.cluster as Json | undefined;
  const user = named(kc.users, ctx?.user)?.user as Json | undefined;
  const pem = (o: Json | undefined, data: string, file: string) => {
    if (typeof o?.[data] === 'string') return Buffer.from(o[data] as string, 'base64').toString('utf8');
    if (typeof o?.[file] === 'string') return readFileSync(o[file] as string, 'utf8');
    return undefined;
  };
  const ca = pem(cluster, 'certificate-authority-data', 'certificate-authority');
  const cert = pem(user, 'client-certificate-data', 'client-certificate');
  const key = pem(user, 'client-key-data', 'client-key');
  if (typeof cluster?.server !== 'string' || !ca || user?.as || user?.exec || user?.['auth-provider']) return undefined;
  const server = cluster.server.replace(/\/$/, '');
  if (typeof user?.token === 'string' && !cert) return { server, tls: { ca }, token: user.token };
  // an exec plugin, impersonation or a token file: kubectl handles those
  return cert && key ? { server, tls: { ca, cert, key } } : undefined;
}

export interface ApiResource {
  group: string;
  version: string;
  /** the plural, as in the URL */
  resource: string;
  kind: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
}

const discoveries = new Map<string, ApiResource[]>();
// aggregated discovery (Kubernetes 1.30+): every group, version and resource in two requests
const DISCOVERY_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

/** Every resource the apiserver serves (aggregated discovery, preferred versions first), cached per server. */
export function discover(target: KubeTarget, refresh = false): ApiResource[] {
  const cached = discoveries.get(target.server);
  if (cached && !refresh) return cached;
  const out: ApiResource[] = [];
  for (const path of ['/api', '/apis']) {
    const r = requestSync(target, 'GET', path, { accept: DISCOVERY_ACCEPT, timeoutMs: 30_000 });
    if (r.status !== 200) throw new Error(`discovery ${path}: HTTP ${r.status}`);
    const list = JSON.parse(r.body) as { kind?: string; items?: Json[] };
    if (list.kind !== 'APIGroupDiscoveryList') throw new Error(`discovery ${path}: not aggregated`);
    for (const g of list.items ?? []) {
      const group = ((g.metadata as Json | undefined)?.name as string | undefined) ?? '';
      // versions come preferred first
      for (const v of (g.versions as Json[] | undefined) ?? [])
        for (const res of (v.resources as Json[] | undefined) ?? []) {
          const kind = (res.responseKind as Json | undefined)?.kind as string | undefined;
          if (!kind) continue;
          out.push({
            group,
            version: v.version as string,
            resource: res.resource as string,
            kind,
            singular: (res.singularResource as string | undefined) ?? kind.toLowerCase(),
            shortNames: (res.shortNames as string[] | undefined) ?? [],
            namespaced: res.scope === 'Namespaced',
          });
        }
    }
  }
  discoveries.set(target.server, out);
  return out;
}
