// The BFF as a Fastify app (main.ts only listens). Thin routes validated with
// the src/api schemas; one error handler; 5xx bodies are generic.
// The BFF as a Fastify app (main.ts only listens). Thin routes validated with
// the src/api schemas; one error handler; 5xx bodies are generic and name the request id.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { ClustersResponse } from '../api/schemas.ts';
import { allowed, installGuard } from './auth/index.ts';
import type { AppDeps } from './deps.ts';
import { installRequestContext, requestIdMixin } from './http/request-context.ts';
import { installErrorHandler, sendError } from './http/errors.ts';
import { registerStatic } from './http/static-assets.ts';
import { validated } from './http/respond.ts';
import { actionRoutes } from './apps/action-routes.ts';
import { appRoutes } from './apps/routes.ts';
import { authRoutes } from './auth/routes.ts';
import { diffRoutes } from './diff/routes.ts';
import { pruneRoutes } from './prune/routes.ts';
import { freezeRoutes } from './freeze/routes.ts';
import { metricsRoutes } from './metrics-routes.ts';
import { ConsoleMetrics } from './metrics.ts';
import { evidenceRoutes } from './evidence/routes.ts';
import { releaseRoutes } from './releases/routes.ts';
import { envReleaseRoutes } from './releases/env-routes.ts';
import { manifestRoutes } from './releases/manifest-routes.ts';
import { streamRoutes } from './apps/stream-routes.ts';
import { treeRoutes } from './tree/routes.ts';
import { tryitRoutes } from './tryit/routes.ts';
import { notificationRoutes } from './notify/routes.ts';
import { sinkRoutes } from './sinks/routes.ts';
import { openApiRoutes } from './openapi/routes.ts';

export type { AppDeps } from './deps.ts';

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: deps.loggerLevel ?? 'info',
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-csrf-token"]'],
        censor: '[redacted]',
      },
      serializers: {
        // query strings can carry OIDC codes and state: log the path only
        req: (req: { method: string; url: string; ip?: string }) => ({
          method: req.method,
          url: req.url.split('?')[0],
          remoteAddress: req.ip,
        }),
      },
      // a line written during a request through the app's logger (services log through it) carries that
      // request's id too; request loggers already bind it
      mixin: requestIdMixin,
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    bodyLimit: 1024 * 1024,
    // a request id the user sees in error bodies and the log carries on every line of that request
    genReqId: () => randomUUID().slice(0, 8),
    ...(deps.trustProxy ? { trustProxy: deps.trustProxy } : {}),
  });

  // every async step of a request (hooks, handler, the services it calls) runs with its id in context
  installRequestContext(app);
  installErrorHandler(app);
  // request latency and errors of every route; the metrics themselves are served in the guarded context
  const metrics = new ConsoleMetrics(deps, { defaultMetrics: deps.defaultMetrics ?? true });
  metrics.install(app);

  app.addHook('onSend', async (_req, rep, payload) => {
    rep.header('X-Content-Type-Options', 'nosniff');
    rep.header('Referrer-Policy', 'no-referrer');
    rep.header('X-Frame-Options', 'DENY');
    rep.header(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
    );
    return payload;
  });

  // Static SPA files: public (no data in them), in their own context, outside the guard.
  // Everything else lives in the guarded context, where a route without an access rule cannot register.
  await app.register(async (api) => {
    installGuard(api, {
      sessions: deps.sessions,
      accounts: deps.accounts,
      recorder: deps.recorder,
      catalog: deps.catalog,
      index: deps.index,
      publicOrigin: deps.publicOrigin,
      routes: deps.routes,
    });
    // liveness: the process answers; the evidence backlog is reported, not fatal (the console stays up)
    api.get('/healthz', { config: { access: { public: true } } }, async () => {
      const ev = deps.recorder.status();
      return { ok: true, evidence: { pending: ev.pending, failing: ev.failing, refused: ev.refused } };
    });
    api.get('/readyz', { config: { access: { public: true } } }, async (_req, rep) => {
      const states = deps.clusters.states();
      const synced = states.filter((s) => s.status === 'connected').length;
      // ready once every cluster has been tried: connected, or known to be unreachable
      const ready = states.every((s) => s.status !== 'connecting');
      // health from just-listed objects is applied in batches: apply it before saying "ready"
      if (ready) deps.catalog.settleNow();
      return rep.code(ready ? 200 : 503).send({
        ready,
        clusters: states.length,
        connected: synced,
        store: deps.store.kind,
        evidence: deps.recorder.status(),
      });
    });
    api.get('/api/clusters', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) =>
      validated(ClustersResponse, {
        clusters: deps.clusters.states().filter((c) => allowed(req, 'app.read', { cluster: c.name })),
      }),
    );
    await api.register(authRoutes, deps);
    await api.register(appRoutes, deps);
    await api.register(actionRoutes, deps);
    await api.register(evidenceRoutes, deps);
    await api.register(releaseRoutes, deps);
    await api.register(envReleaseRoutes, deps);
    await api.register(manifestRoutes, deps);
    await api.register(streamRoutes, deps);
    await api.register(treeRoutes, deps);
    await api.register(diffRoutes, deps);
    await api.register(pruneRoutes, deps);
    await api.register(freezeRoutes, deps);
    await api.register(sinkRoutes, deps);
    await api.register(notificationRoutes, deps);
    await api.register(tryitRoutes, deps); // sandbox mode only (deps.tryit): otherwise no route, 404
    await api.register(metricsRoutes, { metrics, metricsToken: deps.metricsToken });
    await api.register(openApiRoutes); // public: the routes and shapes, no data (openapi/routes.ts)
    api.all('/api/*', { config: { access: { public: true } } }, async (_req, rep) =>
      sendError(rep, 404, 'NotFound', 'no such API route'),
    );
  });

  if (deps.staticDir && existsSync(deps.staticDir)) {
    await registerStatic(app, deps.staticDir);
    // SPA routes: anything that is not an API or a file gets index.html
    app.setNotFoundHandler((req, rep) => {
      if (req.method === 'GET' && !req.url.startsWith('/api/')) return rep.type('text/html').sendFile('index.html');
      return sendError(rep, 404, 'NotFound', 'not found');
    });
  }
  return app;
}
