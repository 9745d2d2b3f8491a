// GET /metrics: Prometheus text format. With CONSOLE_METRICS_TOKEN set, every scrape must send
// `Authorization: Bearer <token>`; without it, only loopback clients (no proxy in between) may scrape.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { sendError } from './http/errors.ts';
import type { ConsoleMetrics } from './metrics.ts';

export interface MetricsRouteOptions {
  metrics: ConsoleMetrics;
  /** CONSOLE_METRICS_TOKEN */
  metricsToken?: string | undefined;
}

const loopback = (a: string | undefined) => !!a && (a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.'));

/** The socket and the client address both loopback, and no proxy header: the request did not come from afar. */
export function fromLoopback(req: FastifyRequest): boolean {
  return (
    loopback(req.socket.remoteAddress) &&
    loopback(req.ip) &&
    req.headers['x-forwarded-for'] === undefined &&
    req.headers.forwarded === undefined
  );
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return !!m?.[1] && timingSafeEqual(digest(m[1]), digest(token));
}

export const metricsRoutes: FastifyPluginAsync<MetricsRouteOptions> = async (app, { metrics, metricsToken }) => {
  // public to the session guard; the token (or loopback) rule is checked here
  app.get('/metrics', { config: { access: { public: true } } }, async (req, rep) => {
    if (metricsToken) {
      if (!bearerMatches(req.headers.authorization, metricsToken))
        return sendError(
          rep.header('WWW-Authenticate', 'Bearer realm="metrics"'),
          401,
          'Unauthenticated',
          'metrics need Authorization: Bearer <CONSOLE_METRICS_TOKEN>',
        );
    } else if (!fromLoopback(req)) {
      return sendError(
        rep,
        403,
        'Forbidden',
        'metrics are served to loopback only; set CONSOLE_METRICS_TOKEN to scrape from elsewhere',
      );
    }
    const body = await metrics.registry.metrics();
    return rep.header('Cache-Control', 'no-store').type(metrics.registry.contentType).send(body);
  });
};
