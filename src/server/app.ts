// The BFF as a Fastify app (main.ts only listens). Thin routes validated with
// the src/api schemas; one error handler; 5xx bodies are generic.
import { existsSync } from 'node:fs';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { z } from 'zod';
import { AppParams, ClustersResponse, type ErrorBody } from '../api/schemas.ts';
import { appId, type App } from '../domain/app.ts';
import type { FastifyRequest } from 'fastify';
import type { ClusterManager } from './kube/cluster-manager.ts';
import { appRoutes } from './routes/apps.ts';
import { evidenceRoutes } from './routes/evidence.ts';
import { streamRoutes } from './routes/stream.ts';
import type { AppCatalog } from './services/app-catalog.ts';
import type { ObjectIndex } from './services/object-index.ts';
import { treeRoutes } from './routes/tree.ts';
import { diffRoutes } from './routes/diff.ts';
import type { EvidenceStore } from './store/evidence-store.ts';
import type { Accounts } from './auth/accounts.ts';
import { allowed, installGuard, type AccessRule } from './auth/guard.ts';
import type { OidcLogin } from './auth/oidc.ts';
import type { SessionStore } from './auth/sessions.ts';
import { authRoutes } from './routes/auth.ts';
import { actionRoutes } from './routes/actions.ts';
import type { AccessReviewer } from './kube/access-review.ts';

export interface AppDeps {
  clusters: ClusterManager;
  catalog: AppCatalog;
  index?: ObjectIndex;
  dataDir?: string;
  store: EvidenceStore;
  envOrder: string[];
  staticDir?: string;
  loggerLevel?: string;
  accounts: Accounts;
  sessions: SessionStore;
  oidc?: OidcLogin | undefined;
  /** CONSOLE_PUBLIC_URL's origin: what Origin headers must say; https → Secure cookies */
  publicOrigin?: string | undefined;
  /** set in impersonation mode: Kubernetes RBAC of the signed-in user decides what it sees */
  reviewer?: AccessReviewer | undefined;
  /** where log lines go (tests scan them); default stdout */
  logStream?: NodeJS.WritableStream;
  routes?: Array<{ method: string; url: string; access: AccessRule }>;
  trustProxy?: string[] | undefined;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly cluster?: string,
  ) {
    super(message);
  }
}

export function sendError(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  cluster?: string,
): FastifyReply {
  const body: ErrorBody = { error: { code, message, ...(cluster ? { cluster } : {}) } };
  return reply.code(status).type('application/json').send(body);
}

/** Validates a response body against its schema before sending (a contract bug becomes a 500, not bad data). */
export function reply<T extends z.ZodType>(schema: T, value: z.input<T>): z.output<T> {
  return schema.parse(value);
}

/**
 * The app a route's `:cluster/:namespace/:kind/:name` names, with pending health updates applied, as this user
 * may see it (in impersonation mode: only if its Kubernetes RBAC lets it get the app object); 400 / 404 otherwise.
 */
export async function appOf(req: FastifyRequest, deps: Pick<AppDeps, 'catalog' | 'reviewer'>): Promise<App> {
  const p = AppParams.safeParse(req.params);
  if (!p.success) throw new HttpError(400, 'BadRequest', 'invalid app id');
  const id = appId(p.data.cluster, p.data.namespace, p.data.kind, p.data.name);
  deps.catalog.settleNow();
  const a = deps.catalog.get(id);
  if (!a || (deps.reviewer && !(await deps.reviewer.visibleApps(req, [a])).length))
    throw new HttpError(404, 'NotFound', `no app ${id}`);
  return a;
}

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
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    bodyLimit: 1024 * 1024,
    ...(deps.trustProxy ? { trustProxy: deps.trustProxy } : {}),
  });

  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown; code?: string }, req, rep) => {
    if (err instanceof HttpError) return sendError(rep, err.status, err.code, err.message, err.cluster);
    if (err.validation || err.name === 'ZodError') {
      if (rep.sent) return rep;
      const msg = err.name === 'ZodError' ? 'invalid request' : err.message;
      return sendError(rep, 400, 'BadRequest', msg);
    }
    const status = err.statusCode ?? 500;
    if (status < 500) return sendError(rep, status, err.code ?? 'BadRequest', err.message);
    req.log.error({ err: { message: err.message, stack: err.stack } }, 'request failed');
    return sendError(rep, 500, 'Internal', 'internal error (see the console log)');
  });

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
      store: deps.store,
      catalog: deps.catalog,
      index: deps.index,
      publicOrigin: deps.publicOrigin,
      routes: deps.routes,
    });
    api.get('/healthz', { config: { access: { public: true } } }, async () => ({ ok: true }));
    api.get('/readyz', { config: { access: { public: true } } }, async (_req, rep) => {
      const states = deps.clusters.states();
      const synced = states.filter((s) => s.status === 'connected').length;
      // ready once every cluster has been tried: connected, or known to be unreachable
      const ready = states.every((s) => s.status !== 'connecting');
      // health from just-listed objects is applied in batches: apply it before saying "ready"
      if (ready) deps.catalog.settleNow();
      return rep
        .code(ready ? 200 : 503)
        .send({ ready, clusters: states.length, connected: synced, store: deps.store.kind });
    });
    api.get('/api/clusters', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) =>
      reply(ClustersResponse, {
        clusters: deps.clusters.states().filter((c) => allowed(req, 'app.read', { cluster: c.name })),
      }),
    );
    await api.register(authRoutes, deps);
    await api.register(appRoutes, deps);
    await api.register(actionRoutes, deps);
    await api.register(evidenceRoutes, deps);
    await api.register(streamRoutes, deps);
    await api.register(treeRoutes, deps);
    await api.register(diffRoutes, deps);
    api.all('/api/*', { config: { access: { public: true } } }, async (_req, rep) =>
      sendError(rep, 404, 'NotFound', 'no such API route'),
    );
  });

  if (deps.staticDir && existsSync(deps.staticDir)) {
    await app.register(fastifyStatic, { root: deps.staticDir, prefix: '/', wildcard: false, index: ['index.html'] });
    // SPA routes: anything that is not an API or a file gets index.html
    app.setNotFoundHandler((req, rep) => {
      if (req.method === 'GET' && !req.url.startsWith('/api/')) return rep.type('text/html').sendFile('index.html');
      return sendError(rep, 404, 'NotFound', 'not found');
    });
  }
  return app;
}
