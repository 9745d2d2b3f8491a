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
}

interface Pending {
  verifier: string;
  nonce: string;
  next: string;
  expires: number;
}

export interface OidcIdentity {
  name: string;
  groups: string[];
}

function loopback(u: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

/** Kubernetes reserves `system:` user and group names (system:masters is cluster-admin). */
export function isReservedName(n: string): boolean {
  return n.toLowerCase().startsWith('system:');
}

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
    if (this.pending.size > 10_000) throw new Error('too many sign-ins in progress');
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
    if (!p || !cookieState || cookieState !== state || p.expires < Date.now())
      throw new Error('unknown or expired sign-in (start again)');
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
    const rawGroups = (claims as Record<string, unknown>)[this.settings.groupsClaim];
    // `system:` names belong to Kubernetes: an IdP group "system:masters" must never reach Impersonate-Group
    const groups = Array.isArray(rawGroups)
      ? rawGroups.filter((g): g is string => typeof g === 'string' && !isReservedName(g))
      : [];
    const rawName = (claims as Record<string, unknown>)[this.settings.usernameClaim];
    const c = claims as Record<string, unknown>;
    // an email is an identity only when the issuer verified it
    const email = c.email_verified === true && typeof c.email === 'string' ? c.email : undefined;
    const name = typeof rawName === 'string' && rawName ? rawName : (email ?? claims.sub);
    if (isReservedName(name)) throw new Error(`the user name ${name} is reserved for Kubernetes (system:)`);
    return { name, groups, next: p.next };
  }
}
