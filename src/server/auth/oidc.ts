// OIDC sign-in: authorization code + PKCE (S256) with state and nonce, via
// openid-client, which checks the ID token's signature (issuer JWKS), issuer,
// audience, expiry and nonce. Plain-http issuers are accepted only on loopback.
import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret?: string | undefined;
  redirectUrl: string;
  scopes: string;
  groupsClaim: string;
  usernameClaim: string;
  usernamePrefix: string;
  groupsPrefix: string;
}

interface Pending {
  verifier: string;
  nonce: string;
  next: string;
  expires: number;
}

export interface OidcIdentity {
  /** the ID token's `iss` and `sub`: who this identity is, whatever its name (accounts.ts personOf) */
  issuer: string;
  subject: string;
  /** the `email` claim, only when the issuer verified it (`email_verified: true`): it may link identities */
  email?: string | undefined;
  /** prefixed user name: what the console and Kubernetes (impersonation) call this person */
  name: string;
  /** prefixed groups, for Impersonate-Group */
  groups: string[];
  /** the issuer's own group names, which `auth.json` maps to console roles */
  idpGroups: string[];
}

function loopback(u: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

/** Kubernetes reserves `system:` user and group names (system:masters is cluster-admin). */
export function isReservedName(n: string): boolean {
  return n.toLowerCase().startsWith('system:');
}

/** A callback for a sign-in this console did not start (or that expired): nothing to record. */
export class UnknownSignIn extends Error {}

export class OidcLogin {
  private config: client.Configuration | undefined;
  private readonly pending = new Map<string, Pending>();

  constructor(readonly settings: OidcSettings) {
    const u = new URL(settings.issuer);
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback(u)))
      throw new Error(`OIDC issuer must be https (plain http only on loopback): ${settings.issuer}`);
  }

  private async discovered(): Promise<client.Configuration> {
    if (this.config) return this.config;
    const issuer = new URL(this.settings.issuer);
    try {
      this.config = await client.discovery(issuer, this.settings.clientId, this.settings.clientSecret, undefined, {
        // the ID token's signature is checked against the issuer's JWKS even though it came
        // straight from the token endpoint: a forged token is refused, not trusted by transport
        execute:
          issuer.protocol === 'http:'
            ? [client.allowInsecureRequests, client.enableNonRepudiationChecks]
            : [client.enableNonRepudiationChecks],
        timeout: 10,
      });
    } catch (e) {
      throw new Error(`cannot reach the OIDC issuer ${issuer.origin}: ${e instanceof Error ? e.message : String(e)}`);
    }
    return this.config;
  }

  /** The URL to send the browser to, and the state to bind to its cookie. */
  async start(next: string): Promise<{ url: string; state: string }> {
    const config = await this.discovered();
    const now = Date.now();
    for (const [k, p] of this.pending) if (p.expires < now) this.pending.delete(k);
    // bounded: past the cap the oldest pending sign-in is dropped (that person starts again), nobody is locked out
    for (const k of this.pending.keys()) {
      if (this.pending.size < 10_000) break;
      this.pending.delete(k);
    }
    const verifier = client.randomPKCECodeVerifier();
    const state = randomBytes(24).toString('base64url');
    const nonce = client.randomNonce();
    this.pending.set(state, { verifier, nonce, next, expires: now + 10 * 60_000 });
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl,
      scope: this.settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, state };
  }

  /** Finishes a sign-in: the callback URL and the state from the browser's cookie. */
  async finish(callbackUrl: URL, cookieState: string | undefined): Promise<OidcIdentity & { next: string }> {
    const state = callbackUrl.searchParams.get('state') ?? '';
    const p = this.pending.get(state);
    // a state nobody started is noise; a started one arriving in another browser (login CSRF) is an attack signal
    if (!p || p.expires < Date.now()) throw new UnknownSignIn('unknown or expired sign-in (start again)');
    if (!cookieState || cookieState !== state)
      throw new Error('unknown or expired sign-in (start again): its state is not bound to this browser');
    this.pending.delete(state);
    const config = await this.discovered();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: p.verifier,
        expectedState: state,
        expectedNonce: p.nonce,
        idTokenExpected: true,
      });
    } catch (e) {
      // openid-client says what is wrong in the cause ("unexpected JWT "aud" (audience) claim value")
      const err = e as Error & { cause?: unknown };
      const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
      throw new Error(`the ID token was refused (${err.message}${cause})`);
    }
    const claims = tokens.claims();
    if (!claims) throw new Error('the issuer returned no ID token');
    const c = claims as Record<string, unknown>;
    const rawGroups = c[this.settings.groupsClaim];
    const idpGroups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];
    const { usernameClaim, usernamePrefix, groupsPrefix } = this.settings;
    // an email is an identity only when the issuer verified it
    if (usernameClaim === 'email' && c.email_verified !== true)
      throw new Error('the issuer did not verify the email address that would name this user');
    const raw = c[usernameClaim];
    if (typeof raw !== 'string' || !raw) throw new Error(`the ID token has no ${usernameClaim} claim to name the user`);
    const name = `${usernamePrefix}${raw}`;
    // `system:` names belong to Kubernetes: never a user name, and an IdP group "system:masters" never reaches
    // Impersonate-Group (even with the prefixes configured empty)
    if (isReservedName(name)) throw new Error(`the user name ${name} is reserved for Kubernetes (system:)`);
    const groups = idpGroups.map((g) => `${groupsPrefix}${g}`).filter((g) => !isReservedName(g));
    // openid-client checked `iss` against the issuer's metadata and requires `sub`
    const issuer = typeof c.iss === 'string' ? c.iss : this.settings.issuer;
    const subject = String(c.sub);
    const email = c.email_verified === true && typeof c.email === 'string' && c.email ? c.email : undefined;
    return { issuer, subject, email, name, groups, idpGroups, next: p.next };
  }
}
