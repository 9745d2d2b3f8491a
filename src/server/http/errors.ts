// One error type for routes and services, one mapping from cluster errors to it, one way to send it.
import type { FastifyReply } from 'fastify';
import type { ErrorBody } from '../../api/schemas.ts';
import { KubeError } from '../kube/connection.ts';

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
