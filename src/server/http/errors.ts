// One error type for routes and services, one mapping from cluster errors to it, one way to send it.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ErrorBody } from '../../api/schemas.ts';
import { KubeError } from '../kube/connection.ts';
import { maskSecretsInText } from '../kube/secret-mask.ts';

/**
 * An expected failure with its HTTP status. `message` is shown to the user; `detail` (the cluster's or a
 * tool's own text) only goes to the log. 5xx bodies never carry either: they name the request id.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly cluster?: string,
    readonly detail?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export function sendError(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  extra: { cluster?: string | undefined; requestId?: string | undefined } = {},
): FastifyReply {
  const body: ErrorBody = {
    error: {
      code,
      message,
      ...(extra.cluster ? { cluster: extra.cluster } : {}),
      ...(extra.requestId ? { requestId: extra.requestId } : {}),
    },
  };
  return reply.code(status).type('application/json').send(body);
}

/**
 * The one mapping from a cluster's answer to the console's: 403 stays 403 (the cluster's RBAC said no),
 * 404 and 409 keep their meaning, 410 (gone: a stale resourceVersion) is a 409 to retry, 429 passes its
 * Retry-After on, an unreachable cluster or a 5xx is a 502 whose text goes to the log only.
 */
export function clusterHttpError(e: unknown, what: string, cluster: string): unknown {
  if (!(e instanceof KubeError)) return e;
  switch (e.status) {
    case 403:
      return new HttpError(403, 'Forbidden', `${what}: ${e.message}`, cluster);
    case 404:
      return new HttpError(404, 'NotFound', `${what}: ${e.message}`, cluster);
    case 409:
    case 410:
      return new HttpError(409, 'Conflict', `${what}: the object changed meanwhile; try again`, cluster, e.message);
    case 422:
      return new HttpError(422, 'Invalid', `${what}: ${e.message}`, cluster);
    case 429:
      return new HttpError(
        429,
        'TooManyRequests',
        `${what}: the cluster asks to slow down; try again shortly`,
        cluster,
        e.message,
        e.retryAfterMs !== undefined ? Math.ceil(e.retryAfterMs / 1000) : undefined,
      );
    default:
      return new HttpError(
        502,
        e.status === 0 ? 'ClusterUnreachable' : 'ClusterError',
        e.status === 0 ? `${what}: cluster ${cluster} is unreachable` : `${what}: the cluster answered with an error`,
        cluster,
        e.message,
      );
  }
}

/** node-postgres's connection failures and PostgreSQL's shutdown/connection classes; SQLite's I/O, full and busy */
const STORE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/** errno codes (and the texts tools print for them) of the console's own disk: full, over a size limit, read-only */
const LOCAL_DISK =
  /\b(ENOSPC|EFBIG|EDQUOT|EROFS|EIO|SIGXFSZ)\b|no space left on device|file too large|read-only file system|disk quota exceeded/i;

/**
 * The console's own disk failing in `e` (its `code`, or named in its message, as git and the renderers print it),
 * as a short name; undefined when the error is something else. Such an error says nothing of the cluster, the
 * repository or the release: the answer is a 503 naming the disk, and work is tried again once it has room.
 */
export function localDiskError(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && LOCAL_DISK.test(code)) return code;
  const m = LOCAL_DISK.exec(e instanceof Error ? e.message : String(e));
  return m ? (m[1] ?? m[0]) : undefined;
}

/** Whether `err` says the console's own database is unreachable or cannot write (not a bug in the request). */
export function storeUnreachable(err: { code?: unknown; message?: unknown }): boolean {
  const code = typeof err.code === 'string' ? err.code : '';
  if (STORE_CODES.has(code) || /^SQLITE_(IOERR|FULL|READONLY|BUSY|CANTOPEN)/.test(code)) return true;
  // the disk under the data directory (a mirror, a manifest, a render's files)
  if (/^(ENOSPC|EFBIG|EDQUOT|EROFS)$/.test(code)) return true;
  const msg = typeof err.message === 'string' ? err.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error/.test(msg);
}

/**
 * The one error handler: expected errors (HttpError) keep their status and message; a cluster's or tool's own
 * text goes to the log only (Secret values masked); 5xx bodies are generic and name the request id that
 * every log line of the request carries; validation errors are 400s.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown; code?: string }, req, rep) => {
    if (err instanceof HttpError) {
      if (err.retryAfterSeconds !== undefined) rep.header('Retry-After', String(err.retryAfterSeconds));
      if (err.detail) req.log.warn({ status: err.status, detail: maskSecretsInText(err.detail) }, err.message);
      if (err.status >= 500)
        return sendError(rep, err.status, err.code, `${err.message} (request ${req.id})`, {
          cluster: err.cluster,
          requestId: req.id,
        });
      return sendError(rep, err.status, err.code, err.message, { cluster: err.cluster });
    }
    if (err.validation || err.name === 'ZodError') {
      if (rep.sent) return rep;
      const msg = err.name === 'ZodError' ? 'invalid request' : err.message;
      return sendError(rep, 400, 'BadRequest', msg);
    }
    const status = err.statusCode ?? 500;
    if (status < 500) return sendError(rep, status, err.code ?? 'BadRequest', err.message);
    req.log.error({ err: { message: maskSecretsInText(err.message), stack: err.stack } }, 'request failed');
    if (storeUnreachable(err)) {
      // the console's own database (PostgreSQL stopped, a full disk): say so, and when to try again
      rep.header('Retry-After', '5');
      return sendError(
        rep,
        503,
        'StoreUnavailable',
        `the console's database or disk cannot be reached or written right now: try again shortly (request ${req.id})`,
        { requestId: req.id },
      );
    }
    return sendError(rep, 500, 'Internal', `internal error (request ${req.id}; see the console log)`, {
      requestId: req.id,
    });
  });
}
