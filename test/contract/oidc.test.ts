// OIDC sign-in against a real (test) OpenID provider on loopback: the console signs people in
// with the authorization code flow and refuses every mis-built or misdirected ID token. On the contract tier's bare
// clusters (./global-setup.ts): the prod apps are the seed's GitOps objects (./seed.ts), and no contract file puts
// an estate on prod (its exact list of prod apps would hold it).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppsResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { freePort, waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { startOidcProvider, type OidcMode, type TestOidcProvider } from '../support/oidc-provider.ts';

let idp: TestOidcProvider;
let con: Awaited<ReturnType<typeof startTestConsole>>;

interface Started {
  /** the URL the provider sends the browser back to (code, state, iss) */
  callback: string;
  /** this browser's console_oidc cookie ("console_oidc=<state>") */
  stateCookie: string;
}

/** A browser starting a sign-in: console → provider (auto-approves) → the callback URL, not yet followed. */
async function start(next = '/'): Promise<Started> {
  const s = await fetch(`${con.url}/api/auth/oidc/start?next=${encodeURIComponent(next)}`, { redirect: 'manual' });
  expect(s.status).toBe(302);
  const stateCookie = (s.headers.getSetCookie().find((c) => c.startsWith('console_oidc=')) ?? '').split(';')[0] ?? '';
  expect(stateCookie).toMatch(/^console_oidc=[A-Za-z0-9_-]{20,}$/);
  const authorize = s.headers.get('location') ?? '';
  expect(authorize.startsWith(`${idp.issuer}/authorize?`)).toBe(true);
  const a = await fetch(authorize, { redirect: 'manual' });
  expect(a.status).toBe(302);
  const callback = a.headers.get('location') ?? '';
  expect(callback.startsWith(`${con.url}/api/auth/oidc/callback?`)).toBe(true);
  return { callback, stateCookie };
}

/** The browser following the callback with a given cookie header. */
async function finish(callback: string, cookie: string | undefined) {
  const r = await fetch(callback, { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} });
  const setCookies = r.headers.getSetCookie();
  const session = setCookies.find((c) => c.startsWith('console_session='));
  return {
    status: r.status,
    text: await r.text(),
    setCookies,
    session: session && !/Max-Age=0/.test(session) ? (session.split(';')[0] ?? '') : undefined,
  };
}

async function signedIn(cookie: string): Promise<Signed & { body: Record<string, unknown> }> {
  const r = await fetch(`${con.url}/api/auth/session`, { headers: { Cookie: cookie } });
  expect(r.status).toBe(200);
  const body = (await r.json()) as Record<string, unknown> & { csrfToken: string; user: { name: string } };
  return { user: body.user.name, cookie, csrf: body.csrfToken, body };
}

async function lastEvidenceSeq(): Promise<number> {
  const r = await as(con.admin, con.url, '/api/evidence?limit=1');
  return (r.body as { events: EvidenceEvent[] }).events[0]?.seq ?? 0;
}

async function evidenceSince(seq: number, type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=50`);
  return (r.body as { events: EvidenceEvent[] }).events.filter((e) => e.seq > seq);
}

beforeAll(async () => {
  idp = await startOidcProvider();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  con = await startTestConsole(
    {
      CONSOLE_PORT: String(port),
      CONSOLE_PUBLIC_URL: url,
      CONSOLE_OIDC_ISSUER: idp.issuer,
      CONSOLE_OIDC_CLIENT_ID: idp.clientId,
      CONSOLE_OIDC_CLIENT_SECRET: idp.clientSecret,
      CONSOLE_OIDC_REDIRECT_URL: `${url}/api/auth/oidc/callback`,
    },
    {
      accounts: {
        groups: { 'platform-oncall': ['oncall@prod/prod'], 'nonprod-viewers': ['viewer@nonprod'] },
      },
    },
  );
  expect(con.url).toBe(url);
  await waitFor(
    'apps listed',
    async () => ((await as(con.admin, con.url, '/api/apps')).body as AppsResponse).apps.length >= 5,
    { timeoutMs: 60_000 },
  );
});

afterAll(async () => {
  await con?.close();
  await idp?.close();
});

describe('OIDC sign-in', () => {
  it('a user of the platform-oncall group gets exactly its mapped grant (oncall@prod/prod) and sees only prod apps', async () => {
    idp.setMode('ok');
    idp.setUser({
      sub: 'olivia',
      name: 'Olivia',
      email: 'olivia@example.com',
      groups: ['platform-oncall', 'unmapped'],
    });
    const seq = await lastEvidenceSeq();
    const { callback, stateCookie } = await start('/apps?env=prod');
    const r = await finish(callback, stateCookie);
    expect(r.status).toBe(200);
    expect(r.text).toContain('url=/apps?env=prod');
    expect(r.session).toBeDefined();
    // the state cookie is single-use: cleared on the way out
    expect(r.setCookies.some((c) => /^console_oidc=;.*Max-Age=0/.test(c))).toBe(true);
    const s = await signedIn(r.session ?? '');
    // sub names the user (stable, unlike preferred_username); names and groups carry the oidc: prefix
    expect(s.body).toMatchObject({
      user: {
        name: 'oidc:olivia',
        source: 'oidc',
        groups: ['oidc:platform-oncall', 'oidc:unmapped'],
        grants: [{ role: 'oncall', clusters: ['prod'], envs: ['prod'] }],
      },
      mustChangePassword: false,
    });
    const apps = (await as(s, con.url, '/api/apps')).body as AppsResponse;
    expect(apps.apps.map((a) => a.id).sort()).toEqual([
      'prod/argocd/application/edge-gateway-prod',
      'prod/flux-system/kustomization/digital-human-prod',
      'prod/flux-system/kustomization/infra-prod',
    ]);
    expect((await as(s, con.url, '/api/apps/nonprod/flux-system/kustomization/digital-human-dev')).status).toBe(403);
    const ev = await evidenceSince(seq, 'auth.signed-in');
    expect(ev.find((e) => e.actor === 'oidc:olivia')).toMatchObject({
      data: { method: 'oidc', groups: ['platform-oncall', 'unmapped'] },
    });
  });

  it('an IdP identity named "admin" gets only its group grants, never the local admin account\'s', async () => {
    idp.setMode('ok');
    idp.setUser({ sub: 'admin', groups: ['nonprod-viewers'] });
    const { callback, stateCookie } = await start();
    const r = await finish(callback, stateCookie);
    expect(r.status).toBe(200);
    const s = await signedIn(r.session ?? '');
    expect(s.body).toMatchObject({
      user: { name: 'oidc:admin', source: 'oidc', grants: [{ role: 'viewer', clusters: ['nonprod'], envs: ['*'] }] },
    });
    expect((await as(s, con.url, '/api/evidence')).status).toBe(403);
    expect(
      (
        await as(s, con.url, '/api/apps/nonprod/flux-system/kustomization/digital-human-dev/reconcile', {
          method: 'POST',
        })
      ).status,
    ).toBe(403);
    // nor can it set a local password for the name (and sign in locally with it)
    const pw = await as(s, con.url, '/api/auth/password', {
      method: 'POST',
      body: { current: 'whatever-it-is', next: 'a-brand-new-password' },
    });
    expect(pw.status).toBe(400);
  });

  it('people, not names: an SSO session is its issuer and subject; a verified email or an admin link makes it a local account’s person', async () => {
    idp.setMode('ok');
    // the admin gives the local "viewer" an email and links the SSO identity "aud-7" to the local "auditor"
    const authFile = join(con.dataDir, 'auth.json');
    const file = JSON.parse(readFileSync(authFile, 'utf8')) as { users: Array<Record<string, unknown>> };
    const account = (name: string) => file.users.find((u) => u.name === name) as Record<string, unknown>;
    account('viewer').email = 'Vera@Example.com';
    account('auditor').identities = [{ issuer: idp.issuer, subject: 'aud-7' }];
    writeFileSync(authFile, JSON.stringify(file));
    const viewerId = String(account('viewer').id);
    const auditorId = String(account('auditor').id);
    expect(viewerId).toMatch(/^[0-9a-f-]{36}$/);
    const ssoSession = async (u: Parameters<TestOidcProvider['setUser']>[0]) => {
      idp.setUser(u);
      const { callback, stateCookie } = await start();
      const r = await finish(callback, stateCookie);
      expect(r.status, r.text).toBe(200);
      return (await signedIn(r.session ?? '')).body.user as Record<string, unknown>;
    };
    const seq = await lastEvidenceSeq();
    const verified = await ssoSession({
      sub: 'vera-1',
      email: 'vera@example.com',
      emailVerified: true,
      groups: ['nonprod-viewers'],
    });
    expect(verified).toMatchObject({
      name: 'oidc:vera-1',
      issuer: idp.issuer,
      subject: 'vera-1',
      person: 'email:vera@example.com',
    });
    const local = await signIn(con.url, 'viewer');
    const localUser = (await signedIn(local.cookie)).body.user;
    expect(localUser).toMatchObject({ issuer: 'console:local', subject: viewerId, person: 'email:vera@example.com' });
    // the same address, not verified by the issuer: another person
    const unverified = await ssoSession({ sub: 'vera-2', email: 'vera@example.com', groups: ['nonprod-viewers'] });
    expect(unverified.person).toBe(`${idp.issuer}#vera-2`);
    // the admin's link
    const linked = await ssoSession({ sub: 'aud-7', groups: ['nonprod-viewers'] });
    expect(linked).toMatchObject({ subject: 'aud-7', person: `console:local#${auditorId}` });
    // a name alone links nothing: SSO "viewer" is not the local viewer
    const namesake = await ssoSession({ sub: 'viewer', groups: ['nonprod-viewers'] });
    expect(namesake.person).toBe(`${idp.issuer}#viewer`);
    const ev = await evidenceSince(seq, 'auth.signed-in');
    expect(ev.find((e) => e.actor === 'oidc:vera-1')?.data).toMatchObject({
      issuer: idp.issuer,
      subject: 'vera-1',
      person: 'email:vera@example.com',
      emailVerified: true,
    });
    expect(ev.find((e) => e.actor === 'viewer')?.data).toMatchObject({
      issuer: 'console:local',
      subject: viewerId,
      person: 'email:vera@example.com',
    });
    expect(ev.find((e) => e.actor === 'oidc:vera-2')?.data).not.toHaveProperty('emailVerified');
  });

  const refused: Array<[OidcMode, string, RegExp]> = [
    ['wrong-audience', 'an ID token minted for another client (wrong audience)', /\baud\b.*\(audience\) claim value/],
    [
      'forged-signature',
      'an ID token signed with a key not in the issuer JWKS (forged signature)',
      /JWT signature verification failed/,
    ],
    ['expired', 'an expired ID token (replayed after its lifetime)', /\bexp\b.*expiration is past/],
    ['wrong-nonce', "an ID token carrying another sign-in's nonce (token injection)", /ID Token\W+nonce\W+claim value/],
    ['wrong-issuer', 'an ID token from another issuer (mix-up)', /\biss\b.*\(issuer\) claim value/],
  ];
  it.each(refused)(
    '%s: %s is refused — 401, no session, the reason on the page, auth.failed evidence',
    async (mode, _what, reason) => {
      idp.setUser({ sub: `mallory-${mode}`, groups: ['platform-oncall'] });
      const { callback, stateCookie } = await start();
      idp.setMode(mode);
      const seq = await lastEvidenceSeq();
      const issued = idp.tokensIssued;
      const r = await finish(callback, stateCookie).finally(() => idp.setMode('ok'));
      // the token exchange did happen: the refusal is about the token itself
      expect(idp.tokensIssued).toBe(issued + 1);
      expect(r.status).toBe(401);
      expect(r.session).toBeUndefined();
      expect(r.setCookies.some((c) => c.startsWith('console_session='))).toBe(false);
      expect(r.text).toContain('Sign-in failed: the ID token was refused');
      expect(r.text).toMatch(reason);
      const failed = await evidenceSince(seq, 'auth.failed');
      expect(failed.length).toBe(1);
      expect(failed[0]).toMatchObject({ actor: 'oidc', data: { method: 'oidc' } });
      expect(String(failed[0]?.data.reason)).toMatch(reason);
      expect((await evidenceSince(seq, 'auth.signed-in')).length).toBe(0);
    },
  );

  it("login CSRF: a callback whose state is not bound to this browser's console_oidc cookie is refused", async () => {
    idp.setMode('ok');
    idp.setUser({ sub: 'mallory', groups: ['platform-oncall'] });
    // the attacker starts a sign-in and sends the victim the callback URL; the victim has its own (or no) state
    const attacker = await start();
    const victim = await start();
    const issued = idp.tokensIssued;
    const seq = await lastEvidenceSeq();
    for (const cookie of [victim.stateCookie, undefined, 'console_oidc=forged-state-value']) {
      const r = await finish(attacker.callback, cookie);
      expect(r.status).toBe(401);
      expect(r.session).toBeUndefined();
      expect(r.text).toContain('unknown or expired sign-in');
    }
    // refused before any code exchange
    expect(idp.tokensIssued).toBe(issued);
    expect((await evidenceSince(seq, 'auth.failed')).length).toBe(3);
    // the state of the victim's own sign-in cannot be pasted onto the attacker's code either
    const spliced = new URL(attacker.callback);
    spliced.searchParams.set('state', victim.stateCookie.split('=')[1] ?? '');
    const r = await finish(spliced.href, victim.stateCookie);
    expect(r.status).toBe(401);
    expect(r.session).toBeUndefined();
  });

  it('replaying a callback URL that already signed someone in is refused', async () => {
    idp.setMode('ok');
    idp.setUser({ sub: 'olivia', groups: ['platform-oncall'] });
    const { callback, stateCookie } = await start();
    const first = await finish(callback, stateCookie);
    expect(first.status).toBe(200);
    expect(first.session).toBeDefined();
    const again = await finish(callback, stateCookie);
    expect(again.status).toBe(401);
    expect(again.session).toBeUndefined();
  });

  it('an IdP user whose groups map to no console grant is refused (no session)', async () => {
    idp.setMode('ok');
    for (const groups of [['contractors'], []]) {
      idp.setUser({ sub: `nogrant-${groups.length}`, groups });
      const seq = await lastEvidenceSeq();
      const issued = idp.tokensIssued;
      const { callback, stateCookie } = await start();
      const r = await finish(callback, stateCookie);
      expect(idp.tokensIssued).toBe(issued + 1);
      expect(r.status).toBe(401);
      expect(r.session).toBeUndefined();
      expect(r.text).toContain(`no console role is granted to oidc:nogrant-${groups.length}`);
      expect((await evidenceSince(seq, 'auth.failed')).length).toBe(1);
    }
  });

  it('the next parameter cannot send the browser off-site after sign-in (open redirect)', async () => {
    idp.setMode('ok');
    idp.setUser({ sub: 'olivia', groups: ['platform-oncall'] });
    for (const next of ['https://evil.example/x', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)']) {
      const { callback, stateCookie } = await start(next);
      const r = await finish(callback, stateCookie);
      expect(r.status).toBe(200);
      expect(r.text).toContain('url=/"');
      expect(r.text).not.toContain('evil.example');
      expect(r.text).not.toContain('javascript:');
    }
  });
});
