// The one access mechanism. Every route declares an access rule in its
// route config; a route without one refuses to register (the BFF does not
// start). One onRequest hook then resolves the session, checks CSRF and
// Origin for every non-safe method, resolves the route's scope (cluster,
// environment) from its parameters, and answers 401/403 — recording every
// 403 as `access.denied` evidence. No URL prefix decides anything.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { can, whyNot, type Action, type Scope } from '../../domain/access.ts';
import type { AppCatalog } from '../services/app-catalog.ts';
import { trackerOf } from '../services/app-tree.ts';
import { trackersOf, type ObjectIndex } from '../services/object-index.ts';
import type { EvidenceStore } from '../store/evidence-store.ts';
import type { Principal, Session, SessionStore } from './sessions.ts';

export type ScopeFrom =
  /** :cluster/:namespace/:kind/:name of an app → its cluster and environment */
  | 'app'
  /** :cluster and ?namespace&kind&name&group of an object → its cluster and its app's (or namespace's) environment */
  | 'object'
  /** :cluster only */
  | 'cluster'
  /** "somewhere": the handler filters each item by its own scope */
  | 'anywhere';

export type AccessRule =
  { public: true } | { signedIn: true; beforePasswordChange?: boolean } | { action: Action; scope: ScopeFrom };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
  }
  interface FastifyRequest {
    principal?: Principal;
    session?: Session;
  }
}

export const SESSION_COOKIE = 'console_session';
export const CSRF_HEADER = 'x-csrf-token';
/** Sign-in has no session yet: a custom header (which no cross-site form can send without a CORS preflight we never allow). */
export const SIGNIN_HEADER = 'x-console-request';

export interface GuardDeps {
  sessions: SessionStore;
  store: EvidenceStore;
  catalog: AppCatalog;
  index?: ObjectIndex | undefined;
  /** the console's public origin (CONSOLE_PUBLIC_URL); default: the request's own Host */
  publicOrigin?: string | undefined;
  /** every guarded route and its rule, as registered (tests walk them all) */
  routes?: Array<{ method: string; url: string; access: AccessRule }>;
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k && !(k in out)) {
      try {
        out[k] = decodeURIComponent(v);
      } catch {
        out[k] = v;
      }
    }
  }
  return out;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The origin a browser request came from must be the console's own. */
export function originAllowed(req: FastifyRequest, publicOrigin: string | undefined): boolean {
  const own = publicOrigin ?? `${req.protocol}://${req.headers.host ?? ''}`;
  const origin = req.headers.origin;
  if (origin !== undefined) return origin === own;
  // no Origin (some same-origin GETs, non-browser clients): a browser still says where it came from
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const referer = req.headers.referer;
  if (referer) {
    try {
      return new URL(referer).origin === own;
    } catch {
      return false;
    }
  }
  return true;
}

function deny(rep: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return rep.code(status).type('application/json').send({ error: { code, message } });
}

export function installGuard(app: FastifyInstance, g: GuardDeps): void {
  app.addHook('onRoute', (r) => {
    if (!r.config?.access) throw new Error(`route ${String(r.method)} ${r.url} declares no access rule`);
    for (const m of [r.method].flat()) g.routes?.push({ method: m, url: r.url, access: r.config.access });
  });

  const envOfObject = (cluster: string, q: Record<string, string | undefined>): string | undefined => {
    const ns = q.namespace || undefined;
    const obj =
      g.index && q.kind && q.name
        ? g.index.get(cluster, { group: q.group ?? '', kind: q.kind, ...(ns ? { namespace: ns } : {}), name: q.name })
        : undefined;
    if (obj && g.index) {
      const trackers = new Set(g.index.ancestors(cluster, obj).flatMap((o) => trackersOf(o)));
      if (trackers.size) {
        const app = g.catalog.list().find((a) => a.cluster === cluster && trackers.has(trackerOf(a)));
        if (app) return app.env;
      }
    }
    // not managed by an app: the namespace is the environment; cluster-scoped objects need a grant on every env
    return ns ?? '*';
  };

  const scopeOf = (req: FastifyRequest, from: ScopeFrom): Scope & { app?: string } => {
    const p = (req.params ?? {}) as Record<string, string | undefined>;
    if (from === 'anywhere') return {};
    if (from === 'cluster') return { cluster: p.cluster ?? '*' };
    if (from === 'object')
      return {
        cluster: p.cluster ?? '*',
        env: envOfObject(p.cluster ?? '', (req.query ?? {}) as Record<string, string | undefined>),
      };
    const id = `${p.cluster}/${p.namespace}/${(p.kind ?? '').toLowerCase()}/${p.name}`;
    const a = g.catalog.get(id);
    // an app the console does not know: only someone with a grant on every env of the cluster learns it is missing
    return { cluster: p.cluster ?? '*', env: a?.env ?? '*', app: id };
  };

  app.addHook('onRequest', async (req, rep) => {
    const rule = req.routeOptions.config.access;
    if (!rule) return deny(rep, 500, 'Internal', 'route without an access rule');
    const unsafe = !SAFE.has(req.method);
    if ('public' in rule) {
      if (unsafe && (!originAllowed(req, g.publicOrigin) || req.headers[SIGNIN_HEADER] !== '1'))
        return deny(rep, 403, 'CsrfRejected', 'cross-site request refused');
      return;
    }
    const cookie = parseCookies(req.headers.cookie)[SESSION_COOKIE];
    const session = g.sessions.get(cookie);
    if (!session) return deny(rep, 401, 'Unauthenticated', 'sign in to continue');
    req.session = session;
    req.principal = session.user;
    if (unsafe) {
      const token = req.headers[CSRF_HEADER];
      if (!originAllowed(req, g.publicOrigin) || typeof token !== 'string' || !sameString(token, session.csrf))
        return deny(rep, 403, 'CsrfRejected', 'missing or wrong CSRF token, or a cross-site request');
    }
    if (session.user.mustChangePassword && !('signedIn' in rule && rule.beforePasswordChange))
      return deny(rep, 403, 'PasswordChangeRequired', 'change the one-time password first');
    if ('signedIn' in rule) return;
    const scope = scopeOf(req, rule.scope);
    const grantScope: Scope = {
      ...(scope.cluster && scope.cluster !== '*' ? { cluster: scope.cluster } : {}),
      ...(scope.env && scope.env !== '*' ? { env: scope.env } : {}),
    };
    // '*' in a scope means "every": only a wildcard grant covers it
    const ok =
      can(session.user.grants, rule.action, grantScope) &&
      (scope.env !== '*' ||
        session.user.grants.some((gr) => gr.envs.includes('*') && can([gr], rule.action, grantScope))) &&
      (scope.cluster !== '*' ||
        session.user.grants.some((gr) => gr.clusters.includes('*') && can([gr], rule.action, grantScope)));
    if (ok) return;
    const reason = whyNot(session.user.grants, rule.action, grantScope) ?? `needs ${rule.action}`;
    await recordDenial(g.store, req, rule.action, scope, reason);
    return deny(rep, 403, 'Forbidden', `${session.user.name} may not ${rule.action.replace('.', ' ')}: ${reason}`);
  });
}

/** Every denial is evidence: who, what, where, by which route, and why. */
export async function recordDenial(
  store: EvidenceStore,
  req: FastifyRequest,
  action: Action,
  scope: Scope & { app?: string },
  reason: string,
): Promise<void> {
  await store.append({
    time: new Date().toISOString(),
    type: 'access.denied',
    actor: req.principal?.name ?? 'anonymous',
    ...(scope.app ? { app: scope.app } : {}),
    ...(scope.cluster && scope.cluster !== '*' ? { cluster: scope.cluster } : {}),
    ...(scope.env && scope.env !== '*' ? { env: scope.env } : {}),
    data: { action, method: req.method, route: req.routeOptions.url ?? '', reason },
  });
}

/** For handlers that filter lists item by item. */
export function allowed(req: FastifyRequest, action: Action, scope: Scope): boolean {
  return !!req.principal && can(req.principal.grants, action, scope);
}
