// Sign-in (local, OIDC), sign-out and password change: the throttles, the credential checks and their
// evidence. No Fastify types: the route parses the request and sets the cookie.
//
// Fail closed: a sign-in records its intent before the session exists, a password change before the new
// hash is saved; when the evidence store cannot write, both are refused (503 EvidenceUnavailable) and
// nothing happens (no session, the old password stays). Failed sign-ins and sign-outs are observations:
// the 401/429 answers and the end of a session never wait for a failing store; their records are retried.
import { LOCAL_ISSUER, type Accounts, type LocalUser } from './accounts.ts';
import { UnknownSignIn, type OidcLogin } from './oidc.ts';
import { Busy } from './passwords.ts';
import { memoryCounters, type AttemptCounters } from './attempt-store.ts';
import { clientKey } from './rate-limit.ts';
import type { Principal, Session, SessionStore } from './sessions.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import { HttpError } from '../http/errors.ts';

export interface AuthActionDeps {
  accounts: Accounts;
  sessions: SessionStore;
  recorder: EvidenceRecorder;
  oidc?: OidcLogin | undefined;
  /** the throttles' counters: in the database, so that every replica counts the same attempts (default: this process) */
  attempts?: AttemptCounters | undefined;
}

/** A new session: `id` goes into the cookie, the store keeps only its hash. */
export interface StartedSession {
  id: string;
  session: Session;
}

/** An OIDC sign-in that did not succeed (shown on the callback page; recorded unless it was not ours). */
export class OidcSignInFailed extends Error {}

const now = () => new Date().toISOString();

const tooMany = (wait: number, what = 'sign-in attempts') =>
  new HttpError(429, 'TooManyAttempts', `too many ${what}; try again in ${wait} s`, undefined, undefined, wait);

export class AuthActions {
  private readonly perAddress;
  private readonly failures;
  private readonly oidcStarts;
  private readonly oidcCallbacks;

  constructor(private readonly d: AuthActionDeps) {
    const counter = d.attempts ?? memoryCounters;
    this.perAddress = counter('sign-in', 20, 60_000);
    this.failures = counter('failures', 5, 5 * 60_000);
    this.oidcStarts = counter('oidc-start', 30, 60_000);
    this.oidcCallbacks = counter('oidc-callback', 30, 60_000);
  }

  /** Counts a sign-in request from this address, well-formed or not: 429 past 20 a minute. */
  async admitSignIn(ip: string): Promise<void> {
    const wait = await this.perAddress.take(clientKey(ip));
    if (wait) throw tooMany(wait);
  }

  /** Local sign-in: 401 on wrong credentials, 429 when throttled, 503 when it cannot be recorded. */
  async signIn(username: string, password: string, ip: string): Promise<StartedSession> {
    // failures count per user name *and* address: guessing is throttled, but nobody can lock an account
    // for everyone else by failing on purpose from elsewhere
    const failKey = `${username.toLowerCase()}|${clientKey(ip)}`;
    const blocked = await this.failures.peek(failKey);
    if (blocked) throw tooMany(blocked);
    const u = await this.check(username, password);
    if (!u) {
      await this.failures.take(failKey);
      // people type passwords into the user name box: only a known account name is recorded
      const known = this.d.accounts.user(username);
      await this.d.recorder.record({
        time: now(),
        type: 'auth.failed',
        actor: known ? known.name : 'unknown user',
        data: { method: 'local', address: ip },
      });
      throw new HttpError(401, 'BadCredentials', 'wrong user name or password');
    }
    const person = this.d.accounts.personOf({ issuer: LOCAL_ISSUER, subject: u.id });
    const user: Principal = {
      name: u.name,
      source: 'local',
      issuer: LOCAL_ISSUER,
      subject: u.id,
      person,
      groups: [],
      grants: u.grants,
      ...(u.mustChangePassword ? { mustChangePassword: true } : {}),
    };
    return this.d.recorder.act(
      {
        time: now(),
        type: 'auth.signed-in',
        actor: u.name,
        data: { method: 'local', address: ip, issuer: LOCAL_ISSUER, subject: u.id, person },
      },
      async () => this.d.sessions.start(user),
    );
  }

  /**
   * Ends the session at once, everywhere (the stored row too, retried while the store is down); the record is
   * an observation (a failing store never keeps a session alive).
   */
  async signOut(s: Session): Promise<void> {
    await this.d.sessions.end(s.key);
    await this.d.recorder.record({ time: now(), type: 'auth.signed-out', actor: s.user.name, data: {} });
  }

  /**
   * Replaces a local user's password: every session of the user ends, this browser gets a fresh one.
   * The intent is recorded before the new hash is saved (503 and the old password stays when it cannot be).
   */
  async changePassword(s: Session, current: string, next: string): Promise<StartedSession> {
    const name = s.user.name;
    const wait = await this.failures.peek(`pw:${name}`);
    if (wait) throw tooMany(wait, 'attempts');
    if (!(await this.check(name, current))) {
      await this.failures.take(`pw:${name}`);
      throw new HttpError(403, 'BadCredentials', 'the current password is wrong');
    }
    if (next === current) throw new HttpError(400, 'BadRequest', 'the new password must differ from the current one');
    return this.d.recorder.act({ time: now(), type: 'auth.password-changed', actor: name, data: {} }, async () => {
      await this.d.accounts.setPassword(name, next);
      // every session of this user ends (streams too)
      await this.d.sessions.revokeUserEverywhere('local', name);
      const { mustChangePassword: _once, ...user } = s.user;
      return this.d.sessions.start(user);
    });
  }

  /** Starts an OIDC sign-in (30 a minute per address): the issuer URL and the state for the cookie. */
  async startOidc(ip: string, next: string): Promise<{ url: string; state: string }> {
    const oidc = this.oidc();
    const wait = await this.oidcStarts.take(clientKey(ip));
    if (wait) throw tooMany(wait, 'sign-ins from this address');
    try {
      return await oidc.start(next);
    } catch (e) {
      throw new HttpError(502, 'IssuerUnreachable', e instanceof Error ? e.message : String(e));
    }
  }

  /**
   * Finishes an OIDC sign-in. Throws `OidcSignInFailed` when the issuer's answer or the user's grants do not
   * allow it (recorded as `auth.failed`, except for callbacks this console never started), an HttpError
   * when throttled (429) or when the sign-in cannot be recorded (503, no session).
   */
  async finishOidc(
    callbackUrl: URL,
    stateCookie: string | undefined,
    ip: string,
  ): Promise<StartedSession & { next: string }> {
    const oidc = this.oidc();
    const wait = await this.oidcCallbacks.take(clientKey(ip));
    if (wait) throw tooMany(wait, 'sign-ins from this address');
    let who: Awaited<ReturnType<OidcLogin['finish']>>;
    let user: Principal;
    try {
      who = await oidc.finish(callbackUrl, stateCookie);
      const grants = this.d.accounts.grantsForGroups(who.idpGroups);
      if (!grants.length)
        throw new Error(`no console role is granted to ${who.name} (groups: ${who.idpGroups.join(', ') || 'none'})`);
      user = {
        name: who.name,
        source: 'oidc',
        issuer: who.issuer,
        subject: who.subject,
        person: this.d.accounts.personOf(who),
        ...(who.email ? { email: who.email } : {}),
        groups: who.groups,
        idpGroups: who.idpGroups,
        grants,
      };
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      // only sign-ins this console started are evidence; stray callbacks would just flood the chain
      if (!(e instanceof UnknownSignIn))
        await this.d.recorder.record({
          time: now(),
          type: 'auth.failed',
          actor: 'oidc',
          data: { method: 'oidc', reason: message.slice(0, 300) },
        });
      throw new OidcSignInFailed(message);
    }
    const started = await this.d.recorder.act(
      {
        time: now(),
        type: 'auth.signed-in',
        actor: who.name,
        data: {
          method: 'oidc',
          groups: who.idpGroups,
          issuer: who.issuer,
          subject: who.subject,
          person: user.person,
          // how the person was found: an email counts only when the issuer verified it
          ...(who.email ? { emailVerified: true } : {}),
        },
      },
      async () => this.d.sessions.start(user),
    );
    return { ...started, next: who.next };
  }

  private oidc(): OidcLogin {
    if (!this.d.oidc) throw new HttpError(404, 'NotFound', 'OIDC sign-in is not configured');
    return this.d.oidc;
  }

  /** The user when the password matches; 503 while the password hashing is saturated. */
  private async check(name: string, password: string): Promise<LocalUser | undefined> {
    try {
      return await this.d.accounts.check(name, password);
    } catch (e) {
      if (e instanceof Busy) throw new HttpError(503, 'Busy', e.message);
      throw e;
    }
  }
}
