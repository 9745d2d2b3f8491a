// A minimal Kubernetes HTTP client for the sandbox's own Node components
// (kubelet stand-in, business endpoints): admin client certificate, JSON
// requests, and a list+watch loop that relists on any watch end.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { ensurePki } from './pki.ts';

export interface KubeTarget {
  cluster: string;
  apiserver: string;
  ca: string;
  cert: string;
  key: string;
}

export function kubeTarget(c: { name: string; apiserver: string; dir: string }): KubeTarget {
  const pki = ensurePki(join(c.dir, 'pki'));
  const admin = pki.clients.admin;
  if (!admin) throw new Error(`no admin client certificate for ${c.name}`);
  return { cluster: c.name, apiserver: c.apiserver, ca: pki.caCert, cert: admin.cert, key: admin.key };
}

type Json = Record<string, unknown>;

const tls = new Map<string, { ca: Buffer; cert: Buffer; key: Buffer }>();
function creds(t: KubeTarget) {
  let c = tls.get(t.cluster);
  if (!c) {
    c = { ca: readFileSync(t.ca), cert: readFileSync(t.cert), key: readFileSync(t.key) };
    tls.set(t.cluster, c);
  }
  return c;
}

export function kubeRequest(
  t: KubeTarget,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${t.apiserver}${path}`,
      {
        method,
        ...creds(t),
        timeout: 15_000,
        headers: { accept: 'application/json', ...(data ? { 'content-type': contentType } : {}) },
      },
      (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (d: Buffer) => chunks.push(d));
        r.on('end', () => {
          let json: Json = {};
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
          } catch {
            /* empty or not JSON */
          }
          resolve({ status: r.statusCode ?? 0, json });
        });
        r.on('error', reject);
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(data);
  });
}

/**
 * Lists `path` (a collection URL) page by page, then watches from the list's
 * resourceVersion; on any end or error, waits a second and starts over.
 * `onObject` sees every listed object and every ADDED/MODIFIED one.
 */
export function listWatch(
  t: KubeTarget,
  path: string,
  onObject: (o: Json) => void,
  onError: (e: Error) => void,
  signal: AbortSignal,
): void {
  const loop = async () => {
    while (!signal.aborted) {
      try {
        let cont = '';
        let rv = '';
        do {
          const sep = path.includes('?') ? '&' : '?';
          const r = await kubeRequest(
            t,
            'GET',
            `${path}${sep}limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
          );
          if (r.status !== 200) throw new Error(`list ${path}: HTTP ${r.status}`);
          for (const o of (r.json.items as Json[] | undefined) ?? []) onObject(o);
          const meta = (r.json.metadata ?? {}) as Json;
          cont = typeof meta.continue === 'string' ? meta.continue : '';
          rv = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : rv;
        } while (cont);
        await watchOnce(t, path, rv, onObject, signal);
      } catch (e) {
        onError(e as Error);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  void loop();
}

function watchOnce(
  t: KubeTarget,
  path: string,
  rv: string,
  onObject: (o: Json) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const sep = path.includes('?') ? '&' : '?';
    const req = request(
      `${t.apiserver}${path}${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${rv}`,
      { method: 'GET', ...creds(t), headers: { accept: 'application/json' } },
      (r) => {
        if (r.statusCode !== 200) {
          r.resume();
          reject(new Error(`watch ${path}: HTTP ${r.statusCode}`));
          return;
        }
        let buf = '';
        r.on('data', (d: Buffer) => {
          buf += d.toString('utf8');
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (!line.trim()) continue;
            const ev = JSON.parse(line) as { type: string; object: Json };
            if (ev.type === 'ERROR') {
              req.destroy();
              resolve();
              return;
            }
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED') onObject(ev.object);
          }
        });
        r.on('end', () => resolve());
        r.on('error', reject);
      },
    );
    req.on('error', reject);
    signal.addEventListener('abort', () => req.destroy(), { once: true });
    req.end();
  });
}
