// SIMULATION — a stand-in for the digital-human app's public endpoint, one
// HTTP listener per environment on 127.0.0.1. It answers like the app would:
// a status, the image digest it "runs" (read from the render worker Pods'
// imageIDs in that environment, which the kubelet stand-in sets), and some
// latency. A control file per environment (setBusinessEndpoint) makes it fail
// or slow. The release evidence's verification requests go here, and so do a Flagger Canary's webhooks (its
// business check, and the load tester gates of sandbox/flagger-gate.ts).
//
//   tsx sandbox/business-endpoint.ts <config.json>    (started by startSandbox)
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { handleGate } from './flagger-gate.ts';
import { kubeRequest, type KubeTarget } from './kube-http.ts';
import { startProcess, type ProcRecord } from './procs.ts';

export interface BusinessEndpointsConfig {
  controlDir: string;
  endpoints: Array<{ env: string; port: number; namespace: string; target: KubeTarget }>;
}

export interface BusinessMode {
  /** ok: 200; fail: `status` (default 503); slow: 200 after `latencyMs` (default 3000) */
  mode: 'ok' | 'fail' | 'slow';
  status?: number;
  latencyMs?: number;
}

type Json = Record<string, unknown>;

export const controlFile = (controlDir: string, env: string) => join(controlDir, `${env}.json`);

/** Written whole, then renamed: the endpoint reads it on every request, and half a file would read as "ok". */
export function writeBusinessMode(controlDir: string, env: string, mode: BusinessMode): void {
  mkdirSync(controlDir, { recursive: true });
  const file = controlFile(controlDir, env);
  writeFileSync(`${file}.tmp`, JSON.stringify(mode));
  renameSync(`${file}.tmp`, file);
}

export function startBusinessEndpoints(opts: {
  runDir: string;
  repoRoot: string;
  config: BusinessEndpointsConfig;
}): ProcRecord {
  const cfg = join(opts.runDir, 'business-endpoints.json');
  mkdirSync(opts.config.controlDir, { recursive: true });
  writeFileSync(cfg, JSON.stringify(opts.config, null, 2));
  return startProcess(
    'business-endpoints',
    join(opts.repoRoot, 'node_modules', '.bin', 'tsx'),
    [join(opts.repoRoot, 'sandbox', 'business-endpoint.ts'), cfg],
    join(opts.runDir, 'business-endpoints.log'),
  );
}

export function readMode(file: string): BusinessMode {
  if (!existsSync(file)) return { mode: 'ok' };
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as BusinessMode;
  } catch {
    return { mode: 'ok' };
  }
}

/**
 * One environment's endpoint as a request listener: its pods read through `ep.target` in `ep.namespace`, its mode
 * asked on every request, the Flagger gates' state under `controlDir`. The sandbox's process serves one per
 * environment (below); a test can serve its own on a loopback port (test/support/business-standin.ts).
 */
export function businessListener(
  ep: { env: string; namespace: string; target: KubeTarget },
  ctx: { controlDir: string; mode: () => BusinessMode; say: (m: string) => void },
): RequestListener {
  const { say } = ctx;
  let cached: { at: number; digests: Record<string, number>; image?: string } = { at: 0, digests: {} };
  const running = async () => {
    if (Date.now() - cached.at < 1000) return cached;
    const r = await kubeRequest(
      ep.target,
      'GET',
      `/api/v1/namespaces/${ep.namespace}/pods?labelSelector=${encodeURIComponent('app.kubernetes.io/name=render-worker')}`,
    );
    const digests: Record<string, number> = {};
    let image: string | undefined;
    let newest = '';
    for (const p of (r.json.items as Json[] | undefined) ?? []) {
      const st = (p.status ?? {}) as Json;
      if (st.phase !== 'Running' || (p.metadata as Json).deletionTimestamp) continue;
      for (const cs of (st.containerStatuses as Json[] | undefined) ?? []) {
        const id = String(cs.imageID ?? '');
        const at = id.indexOf('@');
        if (at < 0) continue;
        const d = id.slice(at + 1);
        digests[d] = (digests[d] ?? 0) + 1;
        const started = String(st.startTime ?? '');
        if (started >= newest) {
          newest = started;
          image = id;
        }
      }
    }
    cached = { at: Date.now(), digests, ...(image ? { image } : {}) };
    return cached;
  };
  return (req, res) => {
    // Flagger's load tester gates (sandbox/flagger-gate.ts): not subject to the fail/slow modes
    if (handleGate(req, res, { controlDir: ctx.controlDir, target: ep.target, say })) return;
    const mode = ctx.mode();
    const t0 = Date.now();
    const answer = async () => {
      if (mode.mode === 'slow') await new Promise((r) => setTimeout(r, mode.latencyMs ?? 3000));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-sandbox-simulation': 'business endpoint stand-in (gitops-console sandbox)',
      };
      if (mode.mode === 'fail') {
        res.writeHead(mode.status ?? 503, headers);
        res.end(JSON.stringify({ service: 'digital-human', env: ep.env, status: 'unavailable' }));
        return;
      }
      let info: Awaited<ReturnType<typeof running>> | undefined;
      try {
        info = await running();
      } catch (e) {
        say(`${ep.env}: cannot read pods: ${(e as Error).message}`);
      }
      const digest = info?.image?.split('@')[1];
      if (digest) headers['x-image-digest'] = digest;
      if (info?.image) headers['x-image'] = info.image;
      headers['server-timing'] = `app;dur=${Date.now() - t0}`;
      res.writeHead(200, headers);
      res.end(
        JSON.stringify({
          service: 'digital-human',
          env: ep.env,
          status: 'ok',
          path: req.url ?? '/',
          ...(info?.image ? { image: info.image } : {}),
          ...(digest ? { imageDigest: digest } : {}),
          runningDigests: info?.digests ?? {},
        }),
      );
    };
    answer().catch((e: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', message: (e as Error).message }));
    });
  };
}

function run(cfg: BusinessEndpointsConfig): void {
  const say = (m: string) => process.stdout.write(`${new Date().toISOString()} ${m}\n`);
  for (const ep of cfg.endpoints) {
    const srv = createServer(
      businessListener(ep, {
        controlDir: cfg.controlDir,
        mode: () => readMode(controlFile(cfg.controlDir, ep.env)),
        say,
      }),
    );
    srv.listen(ep.port, '127.0.0.1', () => say(`SIMULATION: ${ep.env} business endpoint on 127.0.0.1:${ep.port}`));
  }
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: business-endpoint.ts <config.json>');
    process.exit(2);
  }
  run(JSON.parse(readFileSync(file, 'utf8')) as BusinessEndpointsConfig);
}
