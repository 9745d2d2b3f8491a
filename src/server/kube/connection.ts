// One connection to one Kubernetes API server (one kubeconfig context).
// Auth and TLS come from @kubernetes/client-node's KubeConfig (client certs,
// tokens, exec plugins); requests use node:https directly so that watches
// stream line by line and status codes, Retry-After and 410s stay visible.
import { Agent, request, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';

export class KubeError extends Error {
  constructor(
    message: string,
    readonly cluster: string,
    readonly status: number,
    readonly reason?: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface RequestOpts {
  body?: string;
  contentType?: string;
  timeoutMs?: number;
  headers?: Record<string, string | string[]>;
  signal?: AbortSignal;
}

export interface KubeResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

const MAX_BODY = 256 * 1024 * 1024;

export class ClusterConnection {
  readonly server: string;
  private readonly agent: Agent;

  constructor(
    readonly name: string,
    private readonly kc: KubeConfig,
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error(`context ${name} has no cluster`);
    this.server = cluster.server.replace(/\/$/, '');
    this.agent = new Agent({ keepAlive: true, maxSockets: 64 });
  }

  private extraHeaders: Record<string, string | string[]> | undefined;

  /**
   * The same connection sending extra headers with every request (Impersonate-User / -Group):
   * a view sharing this connection's identity and agent, made per request, never stored per user.
   */
  withHeaders(extra: Record<string, string | string[]>): ClusterConnection {
    const view = Object.create(this) as ClusterConnection;
    view.extraHeaders = { ...this.extraHeaders, ...extra };
    return view;
  }

  private async options(method: string, path: string, opts: RequestOpts): Promise<RequestOptions & { url: URL }> {
    const url = new URL(this.server + path);
    const o: RequestOptions = {
      method,
      headers: { Accept: 'application/json', ...this.extraHeaders, ...opts.headers },
    };
    await this.kc.applyToHTTPSOptions(o);
    if (opts.contentType) (o.headers as Record<string, string>)['Content-Type'] = opts.contentType;
    // a body without Content-Length goes out chunked; after a DELETE with a chunked body the apiserver
    // answered the next request on the same keep-alive connection with a bare 400
    if (opts.body !== undefined)
      (o.headers as Record<string, string>)['Content-Length'] = String(Buffer.byteLength(opts.body));
    return { ...o, agent: url.protocol === 'https:' ? this.agent : undefined, url };
  }

  /** One request; resolves with the whole body. Network errors become KubeError status 0. */
  async request(method: string, path: string, opts: RequestOpts = {}): Promise<KubeResponse> {
    const { url, ...o } = await this.options(method, path, opts);
    const fn = url.protocol === 'https:' ? request : httpRequest;
    return new Promise((resolve, reject) => {
      const req = fn(url, { ...o, timeout: opts.timeoutMs ?? 30_000, signal: opts.signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.length;
          if (size > MAX_BODY) {
            req.destroy(new Error(`response larger than ${MAX_BODY} bytes`));
            return;
          }
          chunks.push(d);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (e) => reject(this.netError(e)));
      });
      req.on('timeout', () =>
        req.destroy(
          Object.assign(new Error(`request timed out after ${opts.timeoutMs ?? 30_000} ms`), { code: 'ETIMEDOUT' }),
        ),
      );
      req.on('error', (e) => reject(this.netError(e)));
      if (opts.body !== undefined) req.write(opts.body);
      req.end();
    });
  }

  /** Request that must succeed (2xx) and returns parsed JSON; throws KubeError otherwise. */
  async json<T = Record<string, unknown>>(method: string, path: string, opts: RequestOpts = {}): Promise<T> {
    const res = await this.request(method, path, opts);
    if (res.status < 200 || res.status >= 300) throw this.httpError(res, `${method} ${path.split('?')[0]}`);
    return JSON.parse(res.body) as T;
  }

  /**
   * Streams a watch: calls onEvent for each JSON line. Resolves when the server
   * ends the stream; rejects with KubeError on HTTP errors or network failure.
   */
  async watch(
    path: string,
    onEvent: (ev: { type: string; object: Record<string, unknown> }) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const { url, ...o } = await this.options('GET', path, {});
    const fn = url.protocol === 'https:' ? request : httpRequest;
    return new Promise((resolve, reject) => {
      const req = fn(url, { ...o, signal }, (res) => {
        if ((res.statusCode ?? 0) >= 300) {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () =>
            reject(this.httpError({ status: res.statusCode ?? 0, headers: res.headers, body }, 'watch')),
          );
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i).trim();
            buf = buf.slice(i + 1);
            if (!line) continue;
            try {
              onEvent(JSON.parse(line) as { type: string; object: Record<string, unknown> });
            } catch (e) {
              req.destroy(e instanceof Error ? e : new Error(String(e)));
              return;
            }
          }
        });
        res.on('end', () => resolve());
        res.on('error', (e) => reject(this.netError(e)));
        res.on('aborted', () => reject(new KubeError('watch stream aborted by the server', this.name, 0, 'Aborted')));
      });
      req.on('error', (e) => (signal.aborted ? resolve() : reject(this.netError(e))));
      req.end();
    });
  }

  httpError(res: KubeResponse, what: string): KubeError {
    let reason: string | undefined;
    let message = `${what}: HTTP ${res.status}`;
    try {
      const st = JSON.parse(res.body) as { reason?: string; message?: string };
      reason = st.reason;
      if (st.message) message = `${what}: ${st.message}`;
    } catch {
      /* non-JSON error body */
    }
    const ra = res.headers['retry-after'];
    const retryAfterMs = ra !== undefined && /^\d+$/.test(String(ra)) ? Number(ra) * 1000 : undefined;
    return new KubeError(message, this.name, res.status, reason, retryAfterMs);
  }

  private netError(e: Error): KubeError {
    if (e instanceof KubeError) return e;
    const code = (e as NodeJS.ErrnoException).code;
    return new KubeError(
      `${this.server} unreachable: ${code ?? ''} ${e.message}`.replace(/\s+/g, ' ').trim(),
      this.name,
      0,
      code ?? 'NetworkError',
    );
  }

  close(): void {
    this.agent.destroy();
  }
}
