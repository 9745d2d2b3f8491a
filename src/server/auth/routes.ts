// Sign-in (local accounts, OIDC), sign-out, the current session, password change.
// Thin: parse, call the auth service (throttles, credentials, evidence: auth/actions.ts), set the
// cookie, answer.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SessionResponse } from '../../api/schemas.ts';
import { parseCookies, secureRequest, sessionCookieName } from './guard.ts';
import type { Session } from './sessions.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { validated } from '../http/respond.ts';
import { AuthActions, OidcSignInFailed, type StartedSession } from './actions.ts';

export type AuthDeps = Pick<AppDeps, 'accounts' | 'sessions' | 'recorder' | 'oidc' | 'publicOrigin' | 'attempts'>;

const OIDC_COOKIE = 'console_oidc';
export const SignIn = z.object({ username: z.string().min(1).max(64), password: z.string().min(1).max(1024) });
export const PasswordChange = z.object({ current: z.string().min(1).max(1024), next: z.string().min(12).max(1024) });

/** What is wrong with a password change's body, in words (never "needs 12 characters" for a body that is no JSON). */
export function passwordChangeProblem(body: unknown): string {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return 'send a JSON object {"current": "…", "next": "…"}';
  const b = body as Record<string, unknown>;
  if (typeof b.current !== 'string' || !b.current) return 'current: the current password is missing';
  if (b.current.length > 1024) return 'current: at most 1,024 characters';
  if (typeof b.next !== 'string') return 'next: the new password is missing';
  if (b.next.length < 12) return 'next: the new password needs at least 12 characters';
  if (b.next.length > 1024) return 'next: at most 1,024 characters';
  return 'the password change is malformed';
}

/** Only same-origin paths: no scheme, no `//host`, no backslashes (open-redirect safe). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])[^\s\\]*$/.test(next) ? next : '/';
}

function cookie(name: string, value: string, attrs: string[]): string {
  return [`${name}=${value}`, 'Path=/', 'HttpOnly', ...attrs].join('; ');
}

export function sessionBody(s: Session, oidc: boolean, absoluteMs: number) {
  return {
    user: {
      name: s.user.name,
      source: s.user.source,
      ...(s.user.issuer ? { issuer: s.user.issuer } : {}),
      ...(s.user.subject ? { subject: s.user.subject } : {}),
      ...(s.user.person ? { person: s.user.person } : {}),
      groups: s.user.groups,
      grants: s.user.grants,
    },
    csrfToken: s.csrf,
    mustChangePassword: !!s.user.mustChangePassword,
    expiresAt: new Date(s.createdAt + absoluteMs).toISOString(),
    oidc,
  };
}

export const authRoutes: FastifyPluginAsync<AuthDeps> = async (app, d) => {
  const auth = new AuthActions(d);

  const setSessionCookie = (req: FastifyRequest, rep: FastifyReply, started: StartedSession): Session => {
    const attrs = ['SameSite=Strict', `Max-Age=${Math.floor(d.sessions.absoluteMs / 1000)}`];
    if (secureRequest(req, d.publicOrigin)) attrs.push('Secure');
    rep.header('Set-Cookie', cookie(sessionCookieName(req, d.publicOrigin), started.id, attrs));
    return started.session;
  };

  const body = (s: Session) => validated(SessionResponse, sessionBody(s, !!d.oidc, d.sessions.absoluteMs));

  app.get('/api/auth/providers', { config: { access: { public: true } } }, async () => ({
    local: true,
    oidc: !!d.oidc,
  }));

  app.post('/api/auth/signin', { config: { access: { public: true } } }, async (req, rep) => {
    await auth.admitSignIn(req.ip);
    const parsed = SignIn.safeParse(req.body);
    if (!parsed.success) throw new HttpError(400, 'BadRequest', 'username and password are required');
    const started = await auth.signIn(parsed.data.username, parsed.data.password, req.ip);
    return body(setSessionCookie(req, rep, started));
  });

  app.get('/api/auth/session', { config: { access: { signedIn: true, beforePasswordChange: true } } }, async (req) =>
    body(req.session as Session),
  );

  app.post(
    '/api/auth/signout',
    { config: { access: { signedIn: true, beforePasswordChange: true } } },
    async (req, rep) => {
      await auth.signOut(req.session as Session);
      // a __Host- cookie is only replaced by one with the same attributes (Secure included)
      const attrs = ['SameSite=Strict', 'Max-Age=0', ...(secureRequest(req, d.publicOrigin) ? ['Secure'] : [])];
      rep.header('Set-Cookie', cookie(sessionCookieName(req, d.publicOrigin), '', attrs));
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
      if (!parsed.success) throw new HttpError(400, 'BadRequest', passwordChangeProblem(req.body));
      const started = await auth.changePassword(s, parsed.data.current, parsed.data.next);
      // this browser gets the fresh session (every other one of this user has ended)
      return body(setSessionCookie(req, rep, started));
    },
  );

  app.get('/api/auth/oidc/start', { config: { access: { public: true } } }, async (req, rep) => {
    const started = await auth.startOidc(req.ip, safeNext((req.query as { next?: unknown }).next));
    // Lax: the issuer sends the browser back with a cross-site top-level GET
    const attrs = ['SameSite=Lax', 'Max-Age=600'];
    if (secureRequest(req, d.publicOrigin)) attrs.push('Secure');
    rep.header('Set-Cookie', cookie(OIDC_COOKIE, started.state, attrs));
    return rep.redirect(started.url, 302);
  });

  app.get('/api/auth/oidc/callback', { config: { access: { public: true } } }, async (req, rep) => {
    const base = d.publicOrigin ?? `${req.protocol}://${req.headers.host ?? '127.0.0.1'}`;
    const clear = cookie(OIDC_COOKIE, '', ['SameSite=Lax', 'Max-Age=0']);
    const page = (status: number, title: string, text: string) =>
      rep
        .code(status)
        .header('Set-Cookie', clear)
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html><title>${title}</title><p>${title}: ${text.replace(/[<>&"]/g, ' ')}</p><p><a href="/signin">Back to sign-in</a></p>`,
        );
    let started: StartedSession & { next: string };
    try {
      started = await auth.finishOidc(new URL(req.url, base), parseCookies(req.headers.cookie)[OIDC_COOKIE], req.ip);
    } catch (e) {
      if (e instanceof OidcSignInFailed) return page(401, 'Sign-in failed', e.message);
      // the browser navigated here: the refusal (503, nothing recorded, no session) is a page too
      if (e instanceof HttpError && e.code === 'EvidenceUnavailable') return page(503, 'Sign-in refused', e.message);
      throw e;
    }
    setSessionCookie(req, rep, started);
    rep.header('Set-Cookie', [rep.getHeader('Set-Cookie') as string, clear]);
    // a same-origin page navigates on, so the SameSite=Strict session cookie is sent with it
    const next = safeNext(started.next).replace(/["<>&]/g, '');
    return rep
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><meta http-equiv="refresh" content="0;url=${next}"><title>Signed in</title><a href="${next}">Continue</a>`,
      );
  });
};
