// A small round-robin load balancer for tests: each request goes to the next backend, without stickiness
// (the console must not need it). A backend that refuses the connection (a dead replica) is skipped, as a
// load balancer's health check would; a request that reached a backend is never sent again (a retry could
// do an action twice). Streams (SSE) are piped through. The Host header is kept, as a reverse proxy keeps it.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobin {
  url: string;
  /** which backend (index) served each request, in order: [method path, index] */
  served: Array<{ what: string; backend: number }>;
  close(): Promise<void>;
}

export async function startRoundRobin(backends: string[]): Promise<RoundRobin> {
  let next = 0;
  const served: RoundRobin['served'] = [];
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tries: number) => {
    const i = next++ % backends.length;
    const target = new URL(req.url ?? '/', backends[i]);
    const up = request(
      target,
      { method: req.method, headers: { ...req.headers, 'x-forwarded-for': '127.0.0.1' } },
      (r) => {
        served.push({ what: `${req.method} ${req.url}`, backend: i });
        res.writeHead(r.statusCode ?? 502, { ...r.headers, 'x-test-backend': String(i) });
        r.pipe(res);
        // a backend killed mid-stream resets its side: end the client's response too (an unhandled error here
        // would be the test process's)
        r.on('error', () => res.destroy());
        res.on('close', () => r.destroy());
      },
    );
    up.on('error', (e: NodeJS.ErrnoException) => {
      // refused: the request never reached that backend, the next one may take it
      if (e.code === 'ECONNREFUSED' && tries + 1 < backends.length) return forward(req, res, body, tries + 1);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain', 'x-test-backend': String(i) });
      res.end(`proxy: ${e.message}`);
    });
    up.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
  });
  // Node's 5 s keep-alive races the client's reuse of an idle connection (undici drops it after 4 s by its
  // own timer, which a loaded machine fires late): the client then reads ECONNRESET on a request the proxy never
  // saw. Tests leave connections idle for longer than that (waiting on a replica directly), so hold them longer.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
