// Identity and access against the real sandbox: each test names the attack it stops. Roles and scopes, CSRF and
// Origin, body limits and sign-in brute force (sessions and the first-start admin: security-sessions.test.ts; a
// Secret that must never leave the BFF: security-secret.test.ts). The file owns its estate (own-estate.ts: the dev
// template in a namespace of its own, env dev): the reconciles it asks for, and refuses, are on its own app.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppsResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { as, signIn, TEST_PASSWORD, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';
import { consoleListsOwnApp, otherEstate, postBig } from '../support/security.ts';

const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
const PROD = 'prod/flux-system/kustomization/digital-human-prod';
const RECONCILE_ROUTE = '/api/apps/:cluster/:namespace/:kind/:name/reconcile';

let estate: Estate;
/** this file's own dev app */
let DEV: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
const users: Record<string, Signed> = {};

/** the reconcile request Flux was last given on this file's own Kustomization */
function requestedAt(): string | undefined {
  const k = getJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', estate.kustomization()]);
  return ((k.metadata as { annotations?: Record<string, string> }).annotations ?? {})[
    'reconcile.fluxcd.io/requestedAt'
  ];
}

async function evidence(type: string, limit = 100): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=${limit}`);
  expect(r.status).toBe(200);
  return (r.body as { events: EvidenceEvent[] }).events;
}

beforeAll(async () => {
  estate = await ownEstate({ name: 'security', env: 'dev', files: digitalHumanTemplate('dev') });
  DEV = estate.appId();
  con = await startTestConsole();
  await consoleListsOwnApp(con, DEV);
  // sign-ins are rate limited per address (20/min): each user signs in once, here
  for (const u of ['viewer', 'developer', 'dev-reviewer']) users[u] = await signIn(con.url, u);
}, 300_000);

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
});

describe('roles and scopes', () => {
  it('viewer calling the reconcile API directly gets 403, the cluster is not touched, and an access.denied evidence row names it', async () => {
    const before = requestedAt();
    const r = await as(users.viewer as Signed, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: { code: 'Forbidden' } });
    expect(requestedAt()).toBe(before);
    const denied = (await evidence('access.denied')).find((e) => e.actor === 'viewer' && e.app === DEV);
    expect(denied).toMatchObject({
      cluster: 'nonprod',
      env: 'dev',
      data: { action: 'app.reconcile', method: 'POST', route: RECONCILE_ROUTE },
    });
    expect(String(denied?.data.reason)).toMatch(
      /You need the developer or oncall role on nonprod\/dev to reconcile this app/,
    );
    expect((await evidence('app.reconcile-requested')).some((e) => e.actor === 'viewer')).toBe(false);
  });

  it('developer reconciling its dev app reaches the cluster (annotation set) and leaves app.reconcile-requested evidence', async () => {
    const r = await as(users.developer as Signed, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' });
    expect(r.status).toBe(200);
    const at = String(r.body.requestedAt);
    expect(r.body.objects).toEqual([
      `Kustomization/flux-system/${estate.kustomization()}`,
      `GitRepository/flux-system/${estate.source}`,
    ]);
    expect(requestedAt()).toBe(at);
    const src = getJson(estate.cluster, ['-n', 'flux-system', 'get', 'gitrepository', estate.source]);
    expect(
      (src.metadata as { annotations?: Record<string, string> }).annotations?.['reconcile.fluxcd.io/requestedAt'],
    ).toBe(at);
    const ev = (await evidence('app.reconcile-requested')).find((e) => e.actor === 'developer' && e.time === at);
    expect(ev).toMatchObject({ app: DEV, cluster: 'nonprod', env: 'dev' });
  });

  it('dev-reviewer (reviewer@nonprod/dev) reading staging or prod apps by URL gets 403; lists and evidence hold only nonprod/dev', async () => {
    const rev = users['dev-reviewer'] as Signed;
    for (const id of [STAGING, PROD, 'nonprod/argocd/application/edge-gateway-staging']) {
      for (const suffix of ['', '/tree', '/diff', '/environments']) {
        const r = await as(rev, con.url, `/api/apps/${id}${suffix}`);
        expect(`${id}${suffix} ${r.status}`).toBe(`${id}${suffix} 403`);
      }
    }
    // the staging Deployment by object reference, and its events
    const obj = '?group=apps&version=v1&kind=Deployment&namespace=staging&name=render-worker';
    expect((await as(rev, con.url, `/api/clusters/nonprod/object${obj}`)).status).toBe(403);
    expect((await as(rev, con.url, `/api/clusters/nonprod/events${obj}`)).status).toBe(403);
    expect((await as(rev, con.url, `/api/clusters/prod/object${obj.replace('staging', 'prod')}`)).status).toBe(403);
    // its own env works (the 403s are about scope, not a broken session): this file's dev app and its Deployment
    expect((await as(rev, con.url, `/api/apps/${DEV}`)).status).toBe(200);
    const dev = await as(rev, con.url, `/api/clusters/nonprod/object${obj.replace('staging', estate.namespace)}`);
    expect(dev.status).toBe(200);
    const list = (await as(rev, con.url, '/api/apps')).body as AppsResponse;
    // only dev apps, of nonprod (other files' dev estates, running beside this one, included)
    expect(list.apps.filter((a) => a.cluster !== 'nonprod' || a.env !== 'dev')).toEqual([]);
    // dev: this file's app, the seed's Flux app, its infra (dependsOn), the HelmRelease infra installs and the web
    // ApplicationSet's dev app
    expect(
      list.apps
        .filter((a) => !otherEstate(a, DEV))
        .map((a) => a.id)
        .sort(),
    ).toEqual(
      [
        DEV,
        'nonprod/flux-system/kustomization/digital-human-dev',
        'nonprod/flux-system/kustomization/infra-dev',
        'nonprod/dev/helmrelease/status-page',
        'nonprod/argocd/application/web-dev',
      ].sort(),
    );
    expect(list.envs).toEqual(['dev']);
    const ev = await as(rev, con.url, '/api/evidence?limit=1000');
    expect(ev.status).toBe(200);
    const rows = (ev.body as { events: EvidenceEvent[] }).events;
    expect(rows.length).toBeGreaterThan(0);
    // its env's rows, and nonprod's cluster-wide rows (env null); nothing of staging, prod or console-wide
    expect(rows.filter((e) => e.cluster !== 'nonprod' || (e.env !== 'dev' && e.env !== null))).toEqual([]);
    expect(rows.some((e) => e.env === 'dev')).toBe(true);
    // admin sees rows of other envs in the same store: the filter is real
    const all = (await as(con.admin, con.url, '/api/evidence?limit=1000')).body as { events: EvidenceEvent[] };
    expect(all.events.some((e) => e.env === 'staging' || e.env === 'prod' || e.cluster === null)).toBe(true);
    // verifying the chain needs auditor or admin
    expect((await as(rev, con.url, '/api/evidence/verify')).status).toBe(403);
    const denied = (await evidence('access.denied', 200)).filter((e) => e.actor === 'dev-reviewer');
    expect(denied.some((e) => e.app === STAGING && e.env === 'staging')).toBe(true);
    expect(denied.some((e) => e.app === PROD && e.cluster === 'prod')).toBe(true);
  });

  it('viewer reading the evidence log (needs evidence.read) gets 403', async () => {
    const r = await as(users.viewer as Signed, con.url, '/api/evidence');
    expect(r.status).toBe(403);
    expect(r.text).not.toContain('"events"');
  });
});

describe('CSRF and Origin', () => {
  const path = `/api/apps/${DEV}/reconcile`;

  it('a cross-site POST carrying the session cookie but no CSRF token is refused (403 CsrfRejected), nothing is annotated', async () => {
    const before = requestedAt();
    const dev = users.developer as Signed;
    const variants: Array<Record<string, string>> = [{ 'X-CSRF-Token': '' }, { 'X-CSRF-Token': 'guess' }, {}];
    for (const headers of variants) {
      const r = await fetch(con.url + path, {
        method: 'POST',
        headers: { Cookie: dev.cookie, Origin: con.url, ...headers },
      });
      expect(r.status).toBe(403);
      expect(await r.json()).toMatchObject({ error: { code: 'CsrfRejected' } });
    }
    expect(requestedAt()).toBe(before);
  });

  it('a POST with a valid token from a foreign origin (Origin evil.example, Sec-Fetch-Site cross-site, foreign Referer) is refused', async () => {
    const before = requestedAt();
    const dev = users.developer as Signed;
    const variants: Array<Record<string, string>> = [
      { Origin: 'https://evil.example' },
      { Origin: 'null' },
      { Origin: con.url.replace('127.0.0.1', 'localhost') },
      { 'Sec-Fetch-Site': 'cross-site' },
      { 'Sec-Fetch-Site': 'same-site' },
      { Referer: 'https://evil.example/page' },
    ];
    for (const h of variants) {
      const r = await fetch(con.url + path, {
        method: 'POST',
        headers: { Cookie: dev.cookie, 'X-CSRF-Token': dev.csrf, ...h },
      });
      expect(`${JSON.stringify(h)} ${r.status}`).toBe(`${JSON.stringify(h)} 403`);
      expect(await r.json()).toMatchObject({ error: { code: 'CsrfRejected' } });
    }
    expect(requestedAt()).toBe(before);
  });

  it("another session's CSRF token does not unlock this session's mutations", async () => {
    const dev = users.developer as Signed;
    const r = await as(dev, con.url, path, { method: 'POST', headers: { 'X-CSRF-Token': con.admin.csrf } });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: { code: 'CsrfRejected' } });
  });

  it('sign-in without X-Console-Request (a cross-site form post) is refused with 403 and no session', async () => {
    for (const type of ['application/json', 'application/x-www-form-urlencoded', 'text/plain']) {
      const body =
        type === 'application/json'
          ? JSON.stringify({ username: 'admin', password: TEST_PASSWORD })
          : `username=admin&password=${encodeURIComponent(TEST_PASSWORD)}`;
      const r = await fetch(`${con.url}/api/auth/signin`, { method: 'POST', headers: { 'Content-Type': type }, body });
      expect(r.status).toBe(403);
      expect(await r.json()).toMatchObject({ error: { code: 'CsrfRejected' } });
      expect(r.headers.get('set-cookie')).toBeNull();
    }
  });

  it('sign-in with the right password from a foreign Origin is refused with 403 and no session', async () => {
    const r = await fetch(`${con.url}/api/auth/signin`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: 'https://evil.example' },
      body: JSON.stringify({ username: 'admin', password: TEST_PASSWORD }),
    });
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ error: { code: 'CsrfRejected' } });
    expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('the session cookie cannot be read by scripts or sent cross-site (HttpOnly, SameSite=Strict)', async () => {
    const r = await fetch(`${con.url}/api/auth/signin`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: con.url },
      body: JSON.stringify({ username: 'auditor', password: TEST_PASSWORD }),
    });
    expect(r.status).toBe(200);
    const c = r.headers.get('set-cookie') ?? '';
    expect(c).toMatch(/^console_session=[A-Za-z0-9_-]{43};/);
    expect(c).toMatch(/; HttpOnly/);
    expect(c).toMatch(/; SameSite=Strict/);
    expect(c).toMatch(/; Path=\//);
    // the session id is not in the body (scripts only get the CSRF token)
    expect(await r.text()).not.toContain(c.slice('console_session='.length, c.indexOf(';')));
  });
});

describe('limits', () => {
  const MB20 = 20 * 1024 * 1024;

  it('a 20 MB body to sign-in is cut off with 413 within seconds, and the console keeps answering', async () => {
    const r = await postBig(`${con.url}/api/auth/signin`, { Origin: con.url, 'X-Console-Request': '1' }, MB20, false);
    expect(r.status).toBe(413);
    expect(r.ms).toBeLessThan(3000);
    const h = await fetch(`${con.url}/healthz`);
    expect(h.status).toBe(200);
  });

  it('a 20 MB chunked body (no Content-Length) to the reconcile route is cut off with 413 and nothing is annotated', async () => {
    const before = requestedAt();
    const dev = users.developer as Signed;
    const r = await postBig(
      `${con.url}/api/apps/${DEV}/reconcile`,
      { Cookie: dev.cookie, Origin: con.url, 'X-CSRF-Token': dev.csrf },
      MB20,
      true,
    );
    expect(r.status).toBe(413);
    expect(r.ms).toBeLessThan(3000);
    expect((await fetch(`${con.url}/healthz`)).status).toBe(200);
    expect(requestedAt()).toBe(before);
  });

  it('sign-in brute force: after 5 wrong passwords for one user, even the right one gets 429 with Retry-After', async () => {
    const attempt = (password: string) =>
      fetch(`${con.url}/api/auth/signin`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: con.url },
        body: JSON.stringify({ username: 'oncall', password }),
      });
    for (let i = 0; i < 5; i++) {
      const r = await attempt(`wrong-${i}-${randomBytes(6).toString('hex')}`);
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ error: { code: 'BadCredentials' } });
    }
    const r = await attempt(TEST_PASSWORD);
    expect(r.status).toBe(429);
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(await r.json()).toMatchObject({ error: { code: 'TooManyAttempts' } });
    const retry = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(retry)).toBe(true);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(300);
    // a different user from the same address still gets in: the lock is on the attacked name
    expect((await signIn(con.url, 'staging-viewer')).cookie).toMatch(/^console_session=/);
    // and a name spelled differently is the same account for the limiter
    const upper = await fetch(`${con.url}/api/auth/signin`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: con.url },
      body: JSON.stringify({ username: 'ONCALL', password: TEST_PASSWORD }),
    });
    expect(upper.status).toBe(429);
    const failed = (await evidence('auth.failed')).filter((e) => e.actor === 'oncall');
    expect(failed.length).toBe(5);
  });
});
