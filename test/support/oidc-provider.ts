// A small but real OpenID Connect provider for integration and e2e tests of the BFF's OIDC sign-in: discovery, JWKS,
// authorization code flow with PKCE S256 (auto-approved, no UI), token endpoint with client_secret_basic or
// client_secret_post, userinfo. Plain HTTP on 127.0.0.1 with an ephemeral port. setMode() mis-builds the id_token in
// the ways a relying party must reject.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export type OidcMode = 'ok' | 'wrong-audience' | 'forged-signature' | 'expired' | 'wrong-nonce' | 'wrong-issuer';

export interface OidcUser {
  sub: string;
  name?: string;
  email?: string;
  /** the `email_verified` claim (absent unless set) */
  emailVerified?: boolean;
  groups?: string[];
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** the user the next /authorize auto-approves as (sticky until changed; default sub 'test-user') */
  setUser(u: OidcUser): void;
  /** how the next issued id_token is (mis)built (sticky until changed; default 'ok'); read at the token exchange */
  setMode(m: OidcMode): void;
  /** number of successful token-endpoint exchanges so far */
  readonly tokensIssued: number;
  close(): Promise<void>;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce: string | undefined;
  user: OidcUser;
  expiresAt: number;
}

const TOKEN_TTL_S = 300;
const CODE_TTL_MS = 60_000;
const MAX_BODY = 64 * 1024;
const SCOPES = ['openid', 'profile', 'email', 'groups'];
const CLAIMS = ['iss', 'sub', 'aud', 'iat', 'exp', 'nonce', 'name', 'email', 'email_verified', 'groups'];
const PKCE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

const random = (bytes = 32): string => randomBytes(bytes).toString('base64url');
const sha256b64url = (s: string): string => createHash('sha256').update(s, 'ascii').digest('base64url');

function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

function oauthError(res: ServerResponse, status: number, error: string, description: string): void {
  const headers: Record<string, string> = status === 401 ? { 'www-authenticate': 'Basic realm="oidc-test"' } : {};
  sendJson(res, status, { error, error_description: description }, headers);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** RFC 6749 §2.3.1: client_id and secret are form-urlencoded before being joined and base64-encoded. */
function parseBasic(header: string | undefined): { id: string; secret: string } | null | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m?.[1]) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: dec(decoded.slice(0, colon)), secret: dec(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

export async function startOidcProvider(opts: { clientId?: string } = {}): Promise<TestOidcProvider> {
  const clientId = opts.clientId ?? 'gitops-console';
  const clientSecret = random();
  const kid = `test-${random(8)}`;
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  let forgeryKey: CryptoKey | undefined;

  let user: OidcUser = { sub: 'test-user' };
  let mode: OidcMode = 'ok';
  let tokensIssued = 0;
  const codes = new Map<string, PendingCode>();
  const accessTokens = new Map<string, { user: OidcUser; expiresAt: number }>();
  let issuer = '';

  async function idToken(code: PendingCode): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const iat = mode === 'expired' ? now - 3600 : now;
    const claims: Record<string, unknown> = {
      nonce: mode === 'wrong-nonce' ? 'not-the-nonce' : code.nonce,
      name: code.user.name,
      email: code.user.email,
      email_verified: code.user.emailVerified,
      groups: code.user.groups,
    };
    for (const k of Object.keys(claims)) if (claims[k] === undefined) delete claims[k];
    let key: CryptoKey = privateKey;
    if (mode === 'forged-signature') {
      forgeryKey ??= (await generateKeyPair('RS256')).privateKey;
      key = forgeryKey;
    }
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer(mode === 'wrong-issuer' ? 'http://evil.example' : issuer)
      .setSubject(code.user.sub)
      .setAudience(mode === 'wrong-audience' ? 'some-other-client' : code.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_TTL_S)
      .sign(key);
  }

  function discovery(res: ServerResponse): void {
    sendJson(res, 200, {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      userinfo_endpoint: `${issuer}/userinfo`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: SCOPES,
      claims_supported: CLAIMS,
      authorization_response_iss_parameter_supported: true,
    });
  }

  function authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri') ?? '';
    let redirect: URL | undefined;
    try {
      redirect = new URL(redirectUri);
    } catch {
      redirect = undefined;
    }
    if (q.get('client_id') !== clientId) return oauthError(res, 400, 'invalid_client', 'unknown client_id');
    if (!redirect || !/^https?:$/.test(redirect.protocol) || redirect.hash) {
      return oauthError(res, 400, 'invalid_request', 'redirect_uri missing or not an absolute http(s) URL');
    }
    if (q.get('response_type') !== 'code') {
      return oauthError(res, 400, 'unsupported_response_type', 'only response_type=code');
    }
    if (!(q.get('scope') ?? '').split(' ').includes('openid')) {
      return oauthError(res, 400, 'invalid_scope', 'scope must include openid');
    }
    const codeChallenge = q.get('code_challenge');
    if (!codeChallenge || q.get('code_challenge_method') !== 'S256') {
      return oauthError(res, 400, 'invalid_request', 'code_challenge with code_challenge_method=S256 is required');
    }
    const code = random();
    codes.set(code, {
      clientId,
      redirectUri,
      codeChallenge,
      nonce: q.get('nonce') ?? undefined,
      user: { ...user, groups: user.groups ? [...user.groups] : undefined },
      expiresAt: Date.now() + CODE_TTL_MS,
    });
    redirect.searchParams.set('code', code);
    const state = q.get('state');
    if (state !== null) redirect.searchParams.set('state', state);
    redirect.searchParams.set('iss', issuer);
    res.writeHead(302, { location: redirect.href, 'cache-control': 'no-store' });
    res.end();
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      return oauthError(res, 400, 'invalid_request', 'content-type must be application/x-www-form-urlencoded');
    }
    const form = new URLSearchParams(await readBody(req));

    const basic = parseBasic(req.headers.authorization);
    const postSecret = form.get('client_secret');
    if (basic === null) return oauthError(res, 401, 'invalid_client', 'malformed Basic authorization');
    if (basic && postSecret !== null)
      return oauthError(res, 400, 'invalid_request', 'more than one client auth method');
    const creds = basic ?? (postSecret !== null ? { id: form.get('client_id') ?? '', secret: postSecret } : undefined);
    if (!creds) return oauthError(res, 401, 'invalid_client', 'client authentication required');
    if (creds.id !== clientId || !safeEqual(creds.secret, clientSecret)) {
      return oauthError(res, 401, 'invalid_client', 'client authentication failed');
    }
    const formClientId = form.get('client_id');
    if (formClientId !== null && formClientId !== creds.id) {
      return oauthError(res, 400, 'invalid_request', 'client_id does not match the authenticated client');
    }

    if (form.get('grant_type') !== 'authorization_code') {
      return oauthError(res, 400, 'unsupported_grant_type', 'only authorization_code');
    }
    const codeValue = form.get('code') ?? '';
    const code = codes.get(codeValue);
    codes.delete(codeValue); // one-time, whatever happens next
    if (!code || code.expiresAt < Date.now()) return oauthError(res, 400, 'invalid_grant', 'unknown or used code');
    if (code.clientId !== creds.id) return oauthError(res, 400, 'invalid_grant', 'code issued to another client');
    if (form.get('redirect_uri') !== code.redirectUri) {
      return oauthError(res, 400, 'invalid_grant', 'redirect_uri does not match the authorization request');
    }
    const verifier = form.get('code_verifier') ?? '';
    if (!PKCE_VERIFIER.test(verifier) || !safeEqual(sha256b64url(verifier), code.codeChallenge)) {
      return oauthError(res, 400, 'invalid_grant', 'PKCE verification failed');
    }

    const accessToken = random();
    accessTokens.set(accessToken, { user: code.user, expiresAt: Date.now() + TOKEN_TTL_S * 1000 });
    const body = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: TOKEN_TTL_S,
      scope: SCOPES.join(' '),
      id_token: await idToken(code),
    };
    tokensIssued++;
    sendJson(res, 200, body, { pragma: 'no-cache' });
  }

  function userinfo(req: IncomingMessage, res: ServerResponse): void {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    const entry = m?.[1] ? accessTokens.get(m[1]) : undefined;
    if (!entry || entry.expiresAt < Date.now()) {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'cache-control': 'no-store' });
      res.end();
      return;
    }
    const { sub, name, email, groups } = entry.user;
    sendJson(res, 200, { sub, name, email, groups });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /.well-known/openid-configuration':
        return discovery(res);
      case 'GET /jwks':
        return sendJson(res, 200, { keys: [publicJwk] });
      case 'GET /authorize':
        return authorize(url, res);
      case 'POST /token':
        return token(req, res);
      case 'GET /userinfo':
      case 'POST /userinfo':
        return userinfo(req, res);
      default:
        return sendJson(res, 404, { error: 'not_found' });
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) oauthError(res, 500, 'server_error', err instanceof Error ? err.message : String(err));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    clientId,
    clientSecret,
    setUser(u) {
      user = { ...u, groups: u.groups ? [...u.groups] : undefined };
    },
    setMode(m) {
      mode = m;
    },
    get tokensIssued() {
      return tokensIssued;
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
