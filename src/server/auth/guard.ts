// The one access mechanism. Every route declares an access rule in its
// route config; a route without one refuses to register (the BFF does not
// start). One onRequest hook then resolves the session, checks CSRF and
// Origin for every non-safe method, resolves the route's scope (cluster,
// environment) from its parameters, and answers 401/403 — recording every
// 403 as `access.denied` evidence. No URL prefix decides anything.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { can, whyNot, whyNotOnApp, type Action, type Scope } from '../../domain/access.ts';
import { appId } from '../../domain/app.ts';
import { objectEnv } from '../../domain/env-visibility.ts';
import type { AppCatalog } from '../apps/index.ts';
import { trackerOf } from '../tree/index.ts';
import { trackersOf, type ObjectIndex } from '../kube/object-index.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { Principal, Session, SessionStore } from './sessions.ts';
import { LOCAL_ISSUER, type Accounts } from './accounts.ts';

export type ScopeFrom =
  /** :cluster/:namespace/:kind/:name of an app → its cluster and environment */
  | 'app'
  /** :cluster and ?namespace&kind&name&group of an object → its cluster and its app's (or namespace's) environment */
  | 'object'
  /** :cluster only */
  | 'cluster'
  /** "somewhere": the handler filters each item by its own scope */
  | 'anywhere'
  /** every cluster and environment (what reaches all of them: the event sinks) */
  | 'everywhere';

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

/** Over TLS the cookie is `Secure` and `__Host-` (no Domain, Path=/): a sibling subdomain cannot plant one. */
export function secureRequest(req: FastifyRequest, publicOrigin: string | undefined): boolean {
  return (publicOrigin ?? `${req.protocol}://`).startsWith('https:');
}
export function sessionCookieName(req: FastifyRequest, publicOrigin: string | undefined): string {
  return secureRequest(req, publicOrigin) ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}
export const CSRF_HEADER = 'x-csrf-token';
/** Sign-in has no session yet: a custom header (which no cross-site form can send without a CORS preflight we never allow). */
export const SIGNIN_HEADER = 'x-console-request';

export interface GuardDeps {
  sessions: SessionStore;
  /** grants are looked up again on every request: a removed or demoted user loses access at once */
  accounts?: Accounts | undefined;
  recorder: EvidenceRecorder;
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

/**
 * Current grants and person of a signed-in user; false when the account is gone or renamed (sign in again), or
 * (OIDC) no group grants a role any more or the session does not say which identity it is. The person is found
 * again on every request: a link an admin adds to `auth.json` applies at once.
 */
export function refreshGrants(user: Principal, accounts: Accounts): boolean {
  if (user.source === 'local') {
    // the account this session signed in to (its stable id), still under the name the session shows
    const u = user.subject ? accounts.userById(user.subject) : accounts.user(user.name);
    if (!u || u.name !== user.name) return false;
    user.grants = u.grants;
    user.issuer = LOCAL_ISSUER;
    user.subject = u.id;
    user.person = accounts.personOf({ issuer: LOCAL_ISSUER, subject: u.id });
    return true;
  }
  if (!user.issuer || !user.subject) return false;
  user.person = accounts.personOf({ issuer: user.issuer, subject: user.subject, email: user.email });
  user.grants = accounts.grantsForGroups(user.idpGroups ?? []);
  return user.grants.length > 0;
}

export function installGuard(app: FastifyInstance, g: GuardDeps): void {
  const accounts = g.accounts;
  if (accounts) g.sessions.validator = (s) => refreshGrants(s.user, accounts);
  app.addHook('onRoute', (r) => {
    if (!r.config?.access) throw new Error(`route ${String(r.method)} ${r.url} declares no access rule`);
    for (const m of [r.method].flat()) g.routes?.push({ method: m, url: r.url, access: r.config.access });
  });

  const envOfObject = (cluster: string, q: Record<string, string | undefined>): string | undefined => {
    const ns = q.namespace || undefined;
    // the console's mapping decides where it covers the object: by its namespace (a Namespace by its own name),
    // never by the app whose tracking label the object carries (issue 40: a dev app's object in staging's namespace,
    // or a staging object labelled as the dev app's, is staging's)
    const mapped = objectEnv(
      { group: q.group ?? '', kind: q.kind ?? '', ...(ns ? { namespace: ns } : {}), name: q.name ?? '' },
      (n) => g.catalog.envOfNamespace(cluster, n),
    );
    if (mapped !== undefined) return mapped;
    // no mapping configured (the label decides environments), or a cluster-scoped object: its app's environment
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
    // not managed by an app: the console's environment mapping decides (CONSOLE_ENVIRONMENTS; `unknown` where it
    // covers none), else the namespace is the environment; cluster-scoped objects need a grant on every env
    return ns ? (g.catalog.envOfNamespace(cluster, ns) ?? ns) : '*';
  };

  const scopeOf = (
    req: FastifyRequest,
    from: ScopeFrom,
  ): (Scope & { app?: string; unknownApp?: true }) | { ambiguous: true } => {
    const p = (req.params ?? {}) as Record<string, string | undefined>;
    if (from === 'anywhere') return {};
    if (from === 'everywhere') return { cluster: '*', env: '*' };
    if (from === 'cluster') return { cluster: p.cluster ?? '*' };
    if (from === 'object')
      return {
        cluster: p.cluster ?? '*',
        env: envOfObject(p.cluster ?? '', (req.query ?? {}) as Record<string, string | undefined>),
      };
    const id = appId(p.cluster ?? '', p.namespace ?? '', p.kind ?? '', p.name ?? '');
    const a = g.catalog.get(id);
    // ids join parts with '/', and cluster (context) names may contain one: the app found must be the app named
    if (a && (a.cluster !== p.cluster || a.namespace !== p.namespace || a.name !== p.name)) return { ambiguous: true };
    // an app the console does not know: only someone with a grant on every env of the cluster learns it is missing
    return { cluster: p.cluster ?? '*', env: a?.env ?? '*', app: id, ...(a ? {} : { unknownApp: true as const }) };
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
    const cookie = parseCookies(req.headers.cookie)[sessionCookieName(req, g.publicOrigin)];
    let session: Session | undefined;
    try {
      session = await g.sessions.find(cookie);
    } catch {
      // sessions shared in the database: no answer is not "signed out"
      return deny(rep, 503, 'StoreUnavailable', 'the session store cannot be reached; try again shortly');
    }
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
    const resolved = scopeOf(req, rule.scope);
    if ('ambiguous' in resolved) return deny(rep, 400, 'BadRequest', 'ambiguous app id');
    const scope = resolved;
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
    const reason = whyNot(session.user.grants, rule.action, grantScope) ?? whyNotOnApp(rule.action, undefined);
    recordDenial(g.recorder, req, rule.action, scope, reason);
    // the answer does not say where the app lives (or whether it exists): that stays in the evidence
    const said = rule.scope === 'app' ? whyNotOnApp(rule.action, scope.cluster) : reason;
    return deny(rep, 403, 'Forbidden', said);
  });
}

const DENIAL_WINDOW_MS = 60_000;
const recentDenials = new WeakMap<EvidenceRecorder, Map<string, { until: number; repeated: number }>>();

/**
 * Every denial is evidence: who, what, where, by which route, and why. The same denial (person, action,
 * target) repeated within a minute — by any route — is counted, not appended again (the next record carries
 * `repeatedSinceLastRecord`), so one page visit is one row and nobody can flood the chain.
 */
export function recordDenial(
  recorder: EvidenceRecorder,
  req: FastifyRequest,
  action: Action,
  scope: Scope & { app?: string; unknownApp?: true },
  reason: string,
): void {
  let recent = recentDenials.get(recorder);
  if (!recent) recentDenials.set(recorder, (recent = new Map()));
  const actor = req.principal?.name ?? 'anonymous';
  // one page visit reads several routes (the app, its tree, its diff): the same person denied the same action
  // on the same target is one row per minute, whichever route asked (the first one is named)
  // (ids the console does not know are one target: made-up ids are one row a minute, not one each; issue 40)
  const key = JSON.stringify([actor, action, scope.cluster, scope.env, scope.unknownApp ? '(unknown app)' : scope.app]);
  const now = Date.now();
  const r = recent.get(key);
  if (r && r.until > now) {
    r.repeated++;
    return;
  }
  if (recent.size > 10_000) for (const [k, v] of recent) if (v.until <= now) recent.delete(k);
  recent.set(key, { until: now + DENIAL_WINDOW_MS, repeated: 0 });
  const repeated = r?.repeated ?? 0;
  // an observation: the 403 stands even when the store is down; the record is retried until written
  recorder.observe({
    time: new Date().toISOString(),
    type: 'access.denied',
    actor,
    ...(scope.app ? { app: scope.app } : {}),
    ...(scope.cluster && scope.cluster !== '*' ? { cluster: scope.cluster } : {}),
    ...(scope.env && scope.env !== '*' ? { env: scope.env } : {}),
    data: {
      action,
      method: req.method,
      route: req.routeOptions.url ?? '',
      reason,
      ...(req.principal?.person ? { person: req.principal.person } : {}),
      ...(repeated ? { repeatedSinceLastRecord: repeated } : {}),
    },
  });
}

/** For handlers that filter lists item by item. */
export function allowed(req: FastifyRequest, action: Action, scope: Scope): boolean {
  return !!req.principal && can(req.principal.grants, action, scope);
}
