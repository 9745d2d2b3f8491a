// Sign-in (local accounts, OIDC), sign-out, the current session, password change.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SessionResponse } from '../../api/schemas.ts';
import type { Accounts } from '../auth/accounts.ts';
import { parseCookies, secureRequest, sessionCookieName } from '../auth/guard.ts';
import { UnknownSignIn, type OidcLogin } from '../auth/oidc.ts';
import { clientKey, RateLimiter } from '../auth/rate-limit.ts';
import { Busy } from '../auth/passwords.ts';
import type { Principal, Session, SessionStore } from '../auth/sessions.ts';
import type { EvidenceStore } from '../store/evidence-store.ts';
import { HttpError } from '../http/errors.ts';
import { validated } from '../http/respond.ts';

export interface AuthDeps {
  accounts: Accounts;
  sessions: SessionStore;
  store: EvidenceStore;
  oidc?: OidcLogin | undefined;
  publicOrigin?: string | undefined;
}

const OIDC_COOKIE = 'console_oidc';
const SignIn = z.object({ username: z.string().min(1).max(64), password: z.string().min(1).max(1024) });
const PasswordChange = z.object({ current: z.string().min(1).max(1024), next: z.string().min(12).max(1024) });

/** Only same-origin paths: no scheme, no `//host`, no backslashes (open-redirect safe). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])[^\s\\]*$/.test(next) ? next : '/';
}

function cookie(name: string, value: string, attrs: string[]): string {
  return [`${name}=${value}`, 'Path=/', 'HttpOnly', ...attrs].join('; ');
}

export function sessionBody(s: Session, oidc: boolean, absoluteMs: number) {
  return {
    user: { name: s.user.name, source: s.user.source, groups: s.user.groups, grants: s.user.grants },
    csrfToken: s.csrf,
    mustChangePassword: !!s.user.mustChangePassword,
    expiresAt: new Date(s.createdAt + absoluteMs).toISOString(),
    oidc,
  };
}

export const authRoutes: FastifyPluginAsync<AuthDeps> = async (app, d) => {
  const perAddress = new RateLimiter(20, 60_000);
  const failures = new RateLimiter(5, 5 * 60_000);
  const oidcStarts = new RateLimiter(30, 60_000);
  const oidcCallbacks = new RateLimiter(30, 60_000);

  const startSession = (req: FastifyRequest, rep: FastifyReply, user: Principal): Session => {
    const { id, session } = d.sessions.create(user);
    const attrs = ['SameSite=Strict', `Max-Age=${Math.floor(d.sessions.absoluteMs / 1000)}`];
    if (secureRequest(req, d.publicOrigin)) attrs.push('Secure');
    rep.header('Set-Cookie', cookie(sessionCookieName(req, d.publicOrigin), id, attrs));
    return session;
  };

  const body = (s: Session) => validated(SessionResponse, sessionBody(s, !!d.oidc, d.sessions.absoluteMs));

  app.get('/api/auth/providers', { config: { access: { public: true } } }, async () => ({
    local: true,
    oidc: !!d.oidc,
  }));

  app.post('/api/auth/signin', { config: { access: { public: true } } }, async (req, rep) => {
    const addr = clientKey(req.ip);
    const tooMany = (wait: number) => {
      rep.header('Retry-After', String(wait));
      return new HttpError(429, 'TooManyAttempts', `too many sign-in attempts; try again in ${wait} s`);
    };
    const wait = perAddress.take(addr);
    if (wait) throw tooMany(wait);
    const parsed = SignIn.safeParse(req.body);
    if (!parsed.success) throw new HttpError(400, 'BadRequest', 'username and password are required');
    const { username, password } = parsed.data;
    // failures count per user name *and* address: guessing is throttled, but nobody can lock an account
    // for everyone else by failing on purpose from elsewhere
    const failKey = `${username.toLowerCase()}|${addr}`;
    const blocked = failures.peek(failKey);
    if (blocked) throw tooMany(blocked);
    let u: Awaited<ReturnType<Accounts['check']>>;
    try {
      u = await d.accounts.check(username, password);
    } catch (e) {
      if (e instanceof Busy) throw new HttpError(503, 'Busy', e.message);
      throw e;
    }
    if (!u) {
      failures.take(failKey);
      // people type passwords into the user name box: only a known account name is recorded
      const known = d.accounts.user(username);
      await d.store.append({
        time: new Date().toISOString(),
        type: 'auth.failed',
        actor: known ? known.name : 'unknown user',
        data: { method: 'local', address: req.ip },
      });
      throw new HttpError(401, 'BadCredentials', 'wrong user name or password');
    }
    const s = startSession(req, rep, {
      name: u.name,
      source: 'local',
      groups: [],
      grants: u.grants,
      ...(u.mustChangePassword ? { mustChangePassword: true } : {}),
    });
    await d.store.append({
      time: new Date().toISOString(),
      type: 'auth.signed-in',
      actor: u.name,
      data: { method: 'local', address: req.ip },
    });
    return body(s);
  });

  app.get('/api/auth/session', { config: { access: { signedIn: true, beforePasswordChange: true } } }, async (req) =>
    body(req.session as Session),
  );

  app.post(
    '/api/auth/signout',
    { config: { access: { signedIn: true, beforePasswordChange: true } } },
    async (req, rep) => {
      const s = req.session as Session;
      d.sessions.revokeKey(s.key);
      // a __Host- cookie is only replaced by one with the same attributes (Secure included)
      const attrs = ['SameSite=Strict', 'Max-Age=0', ...(secureRequest(req, d.publicOrigin) ? ['Secure'] : [])];
      rep.header('Set-Cookie', cookie(sessionCookieName(req, d.publicOrigin), '', attrs));
      await d.store.append({ time: new Date().toISOString(), type: 'auth.signed-out', actor: s.user.name, data: {} });
      return { ok: true };
    },
  );

  app.post(
    '/api/auth/password',
    { config: { access: { signedIn: true, beforePasswordChange: true } } },
    async (req, rep) => {
      const s = req.session as Session;
      if (s.user.source !== 'local')
        throw new HttpError(400, 'BadRequest', 'passwords of OIDC users live at the issuer');
      const parsed = PasswordChange.safeParse(req.body);
      if (!parsed.success) throw new HttpError(400, 'BadRequest', 'the new password needs at least 12 characters');
      const wait = failures.peek(`pw:${s.user.name}`);
      if (wait) {
        rep.header('Retry-After', String(wait));
        throw new HttpError(429, 'TooManyAttempts', `too many attempts; try again in ${wait} s`);
      }
      const ok = await d.accounts.check(s.user.name, parsed.data.current).catch((e: unknown) => {
        if (e instanceof Busy) throw new HttpError(503, 'Busy', e.message);
        throw e;
      });
      if (!ok) {
        failures.take(`pw:${s.user.name}`);
        throw new HttpError(403, 'BadCredentials', 'the current password is wrong');
      }
      if (parsed.data.next === parsed.data.current)
        throw new HttpError(400, 'BadRequest', 'the new password must differ from the current one');
      await d.accounts.setPassword(s.user.name, parsed.data.next);
      // every session of this user ends (streams too); this browser gets a fresh one
      d.sessions.revokeUser('local', s.user.name);
      const { mustChangePassword: _once, ...user } = s.user;
      const next = startSession(req, rep, user);
      await d.store.append({
        time: new Date().toISOString(),
        type: 'auth.password-changed',
        actor: s.user.name,
        data: {},
      });
      return body(next);
    },
  );

  app.get('/api/auth/oidc/start', { config: { access: { public: true } } }, async (req, rep) => {
    if (!d.oidc) throw new HttpError(404, 'NotFound', 'OIDC sign-in is not configured');
    const wait = oidcStarts.take(clientKey(req.ip));
    if (wait) {
      rep.header('Retry-After', String(wait));
      throw new HttpError(429, 'TooManyAttempts', `too many sign-ins from this address; try again in ${wait} s`);
    }
    const next = safeNext((req.query as { next?: unknown }).next);
    let started: { url: string; state: string };
    try {
      started = await d.oidc.start(next);
    } catch (e) {
      throw new HttpError(502, 'IssuerUnreachable', e instanceof Error ? e.message : String(e));
    }
    // Lax: the issuer sends the browser back with a cross-site top-level GET
    const attrs = ['SameSite=Lax', 'Max-Age=600'];
    if (secureRequest(req, d.publicOrigin)) attrs.push('Secure');
    rep.header('Set-Cookie', cookie(OIDC_COOKIE, started.state, attrs));
    return rep.redirect(started.url, 302);
  });

  app.get('/api/auth/oidc/callback', { config: { access: { public: true } } }, async (req, rep) => {
    if (!d.oidc) throw new HttpError(404, 'NotFound', 'OIDC sign-in is not configured');
    const base = d.publicOrigin ?? `${req.protocol}://${req.headers.host ?? '127.0.0.1'}`;
    const url = new URL(req.url, base);
    const clear = cookie(OIDC_COOKIE, '', ['SameSite=Lax', 'Max-Age=0']);
    const wait = oidcCallbacks.take(clientKey(req.ip));
    if (wait) {
      rep.header('Retry-After', String(wait));
      throw new HttpError(429, 'TooManyAttempts', `too many sign-ins from this address; try again in ${wait} s`);
    }
    try {
      const who = await d.oidc.finish(url, parseCookies(req.headers.cookie)[OIDC_COOKIE]);
      const grants = d.accounts.grantsForGroups(who.idpGroups);
      if (!grants.length)
        throw new Error(`no console role is granted to ${who.name} (groups: ${who.idpGroups.join(', ') || 'none'})`);
      startSession(req, rep, { name: who.name, source: 'oidc', groups: who.groups, idpGroups: who.idpGroups, grants });
      rep.header('Set-Cookie', [rep.getHeader('Set-Cookie') as string, clear]);
      await d.store.append({
        time: new Date().toISOString(),
        type: 'auth.signed-in',
        actor: who.name,
        data: { method: 'oidc', groups: who.idpGroups },
      });
      // a same-origin page navigates on, so the SameSite=Strict session cookie is sent with it
      const next = safeNext(who.next);
      return rep
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html><meta http-equiv="refresh" content="0;url=${next.replace(/["<>&]/g, '')}"><title>Signed in</title><a href="${next.replace(/["<>&]/g, '')}">Continue</a>`,
        );
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      // only sign-ins this console started are evidence; stray callbacks would just flood the chain
      if (!(e instanceof UnknownSignIn))
        await d.store.append({
          time: new Date().toISOString(),
          type: 'auth.failed',
          actor: 'oidc',
          data: { method: 'oidc', reason: message.slice(0, 300) },
        });
      rep.header('Set-Cookie', clear);
      const safe = message.replace(/[<>&"]/g, ' ');
      return rep
        .code(401)
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html><title>Sign-in failed</title><p>Sign-in failed: ${safe}</p><p><a href="/signin">Back to sign-in</a></p>`,
        );
    }
  });
};
