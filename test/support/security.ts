// What the security files (test/integration/security*.test.ts) share: route patterns filled from an app id, an
// SSE stream held open, a big POST, and which apps of the console's lists are other test files' estates.
import { request as httpRequest } from 'node:http';
import type { AppsResponse } from '../../src/api/schemas.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, type Signed } from './auth.ts';

/** A route pattern with its :params filled from an app id ("cluster/namespace/kind/name"). */
export function fill(url: string, appId: string): string {
  const [cluster = '', namespace = '', kind = '', name = ''] = appId.split('/');
  return url
    .replace(':cluster', cluster)
    .replace(':namespace', namespace)
    .replace(':kind', kind)
    .replace(':name', name)
    .replace(':env', ['dev', 'staging', 'prod'].find((e) => name.endsWith(`-${e}`)) ?? 'dev')
    .replace(/\*$/, 'no-such-thing');
}

/**
 * An app of another test file's estate (./own-estate.ts: its namespace is `t-<env>-<id>`, its Kustomizations and
 * Applications `<id>-<app>` with an id `<name>-<6 hex>`), running beside this file: not `mine`.
 */
export function otherEstate(app: { id: string; name: string; namespace: string }, mine: string): boolean {
  return app.id !== mine && (app.namespace.startsWith('t-') || /-[0-9a-f]{6}-[a-z0-9-]+$/.test(app.name));
}

/** POSTs `size` bytes with node:http (declared length or chunked) and resolves with the first response. */
export function postBig(
  url: string,
  headers: Record<string, string>,
  size: number,
  chunked: boolean,
): Promise<{ status: number; body: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...headers,
          ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(size) }),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - t0 }));
        res.on('error', reject);
      },
    );
    // the server may answer and close before the whole body is sent: that is the point
    req.on('error', (e) => setTimeout(() => reject(e), 3000));
    const chunk = Buffer.alloc(256 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    req.write('{"username":"admin","password":"');
    pump();
  });
}

/** Opens the SSE stream with a cookie; collects its text until ended or aborted. */
export function openStream(base: string, cookie: string) {
  const ac = new AbortController();
  let text = '';
  let ended = false;
  const opened = fetch(`${base}/api/stream`, { headers: { Cookie: cookie }, signal: ac.signal });
  const done = opened.then(async (res) => {
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no stream body');
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { value, done: d } = await reader.read();
        if (d) break;
        text += dec.decode(value, { stream: true });
      }
      ended = true;
    } catch {
      /* aborted by the test */
    }
  });
  return {
    status: opened.then((r) => r.status),
    done,
    get text() {
      return text;
    },
    get ended() {
      return ended;
    },
    close: () => ac.abort(),
  };
}

/** Until the test console is ready and lists the apps, this file's own (`appId`) among them. */
export async function consoleListsOwnApp(con: { url: string; admin: Signed }, appId: string): Promise<void> {
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
  await waitFor(
    "apps listed, this file's own among them",
    async () => {
      const apps = ((await as(con.admin, con.url, '/api/apps')).body as AppsResponse).apps;
      return apps.length >= 5 && apps.some((a) => a.id === appId);
    },
    { timeoutMs: 60_000 },
  );
}
