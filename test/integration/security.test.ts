// Identity and access against the real sandbox: each test names the attack it stops.
// Roles and scopes, sessions (401 on every route, sign-out cuts streams), CSRF and Origin,
// body limits, sign-in brute force, the first-start admin, and a Secret that must never leave the BFF.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppsResponse, DiffResponse, EnvCompareResponse, TreeResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import {
  commitAndPush,
  getJson,
  waitForKustomizationRevision,
  waitForRevisionPrunedByAdmin,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole } from '../../src/server/main.ts';
import { as, signIn, TEST_PASSWORD, type Signed } from '../support/auth.ts';
import { SANDBOX_GIT_ENV } from '../support/bff-process.ts';
import { startTestConsole } from '../support/console.ts';
import { bffKubeconfig } from '../support/kubeconfig.ts';

const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
const PROD = 'prod/flux-system/kustomization/digital-human-prod';
const RECONCILE_ROUTE = '/api/apps/:cluster/:namespace/:kind/:name/reconcile';

let con: Awaited<ReturnType<typeof startTestConsole>>;
const logLines: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _enc, cb) {
    logLines.push(chunk.toString('utf8'));
    cb();
  },
});
const users: Record<string, Signed> = {};

/** A route pattern with its :params filled from an app id ("cluster/namespace/kind/name"). */
function fill(url: string, appId = DEV): string {
  const [cluster = '', namespace = '', kind = '', name = ''] = appId.split('/');
  return url
    .replace(':cluster', cluster)
    .replace(':namespace', namespace)
    .replace(':kind', kind)
    .replace(':name', name)
    .replace(':env', ['dev', 'staging', 'prod'].find((e) => name.endsWith(`-${e}`)) ?? 'dev')
    .replace(/\*$/, 'no-such-thing');
}

function requestedAt(): string | undefined {
  const k = getJson('nonprod', ['-n', 'flux-system', 'get', 'kustomization', 'digital-human-dev']);
  return ((k.metadata as { annotations?: Record<string, string> }).annotations ?? {})[
    'reconcile.fluxcd.io/requestedAt'
  ];
}

async function evidence(type: string, limit = 100): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=${limit}`);
  expect(r.status).toBe(200);
  return (r.body as { events: EvidenceEvent[] }).events;
}

/** POSTs `size` bytes with node:http (declared length or chunked) and resolves with the first response. */
function postBig(
  url: string,
  headers: Record<string, string>,
  size: number,
  chunked: boolean,
): Promise<{ status: number; body: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...headers,
          ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(size) }),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - t0 }));
        res.on('error', reject);
      },
    );
    // the server may answer and close before the whole body is sent: that is the point
    req.on('error', (e) => setTimeout(() => reject(e), 3000));
    const chunk = Buffer.alloc(256 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    req.write('{"username":"admin","password":"');
    pump();
  });
}

/** Opens the SSE stream with a cookie; collects its text until ended or aborted. */
function openStream(base: string, cookie: string) {
  const ac = new AbortController();
  let text = '';
  let ended = false;
  const opened = fetch(`${base}/api/stream`, { headers: { Cookie: cookie }, signal: ac.signal });
  const done = opened.then(async (res) => {
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no stream body');
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { value, done: d } = await reader.read();
        if (d) break;
        text += dec.decode(value, { stream: true });
      }
      ended = true;
    } catch {
      /* aborted by the test */
    }
  });
  return {
    status: opened.then((r) => r.status),
    done,
    get text() {
      return text;
    },
    get ended() {
      return ended;
    },
    close: () => ac.abort(),
  };
}

beforeAll(async () => {
  con = await startTestConsole({ LOG_LEVEL: 'debug' }, { logStream });
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
  await waitFor(
    'apps listed',
    async () => ((await as(con.admin, con.url, '/api/apps')).body as AppsResponse).apps.length >= 5,
    { timeoutMs: 60_000 },
  );
  // sign-ins are rate limited per address (20/min): each user signs in once, here
  for (const u of ['viewer', 'developer', 'dev-reviewer']) users[u] = await signIn(con.url, u);
});

afterAll(async () => {
  await con?.close();
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

  it('developer reconciling digital-human-dev reaches the cluster (annotation set) and leaves app.reconcile-requested evidence', async () => {
    const r = await as(users.developer as Signed, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' });
    expect(r.status).toBe(200);
    const at = String(r.body.requestedAt);
    expect(r.body.objects).toEqual([
      'Kustomization/flux-system/digital-human-dev',
      'GitRepository/flux-system/digital-human',
    ]);
    expect(requestedAt()).toBe(at);
    const src = getJson('nonprod', ['-n', 'flux-system', 'get', 'gitrepository', 'digital-human']);
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
    // its own env works (the 403s are about scope, not a broken session)
    expect((await as(rev, con.url, `/api/apps/${DEV}`)).status).toBe(200);
    const dev = await as(rev, con.url, `/api/clusters/nonprod/object${obj.replace('staging', 'dev')}`);
    expect(dev.status).toBe(200);
    const list = (await as(rev, con.url, '/api/apps')).body as AppsResponse;
    // dev: the Flux app, its infra (dependsOn), the HelmRelease infra installs and the web ApplicationSet's dev app
    expect(list.apps.map((a) => a.id).sort()).toEqual(
      [
        DEV,
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

describe('sessions', () => {
  const guarded = () =>
    con.routes.filter((r) => !('public' in r.access)).map((r) => ({ method: r.method, path: fill(r.url) }));

  it('every non-public route answers 401 without a session cookie', async () => {
    const routes = guarded();
    expect(routes.length).toBeGreaterThanOrEqual(12);
    for (const r of routes) {
      const res = await fetch(con.url + r.path, {
        method: r.method,
        headers: { Origin: con.url, 'X-Console-Request': '1' },
      });
      const body = r.method === 'HEAD' ? '' : await res.text();
      expect(`${r.method} ${r.path} ${res.status}`).toBe(`${r.method} ${r.path} 401`);
      if (r.method !== 'HEAD') expect(JSON.parse(body)).toMatchObject({ error: { code: 'Unauthenticated' } });
    }
  });

  it('every non-public route answers 401 to a forged session cookie (random id, altered id, the CSRF token as id, an overlong id)', async () => {
    const real = con.admin.cookie.split('=')[1] ?? '';
    const flip = real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A');
    const forged = [randomBytes(32).toString('base64url'), flip, con.admin.csrf, real + real + real + real];
    for (const r of guarded()) {
      for (const id of forged) {
        const res = await fetch(con.url + r.path, {
          method: r.method,
          headers: { Cookie: `console_session=${id}`, Origin: con.url, 'X-CSRF-Token': con.admin.csrf },
        });
        if (r.method !== 'HEAD') await res.text();
        expect(`${r.method} ${r.path} ${res.status}`).toBe(`${r.method} ${r.path} 401`);
      }
    }
    // the real cookie still works on the same routes (the 401s are about the cookie)
    expect((await as(con.admin, con.url, '/api/apps')).status).toBe(200);
  });

  it('sign-out revokes the session (the old cookie gets 401) and cuts its open SSE stream', async () => {
    const s = await signIn(con.url, 'viewer');
    const stream = openStream(con.url, s.cookie);
    expect(await stream.status).toBe(200);
    await waitFor('stream open', async () => stream.text.includes('retry:'), { timeoutMs: 5000 });
    // a stream of the same user's other session, which must stay open: only the signed-out session is cut
    const other = openStream(con.url, (users.viewer as Signed).cookie);
    expect(await other.status).toBe(200);
    const out = await as(s, con.url, '/api/auth/signout', { method: 'POST' });
    expect(out.status).toBe(200);
    const t0 = Date.now();
    await Promise.race([stream.done, new Promise((r) => setTimeout(r, 5000))]);
    stream.close();
    expect(stream.ended).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await as(s, con.url, '/api/apps')).status).toBe(401);
    expect((await as(s, con.url, '/api/auth/session')).status).toBe(401);
    const again = openStream(con.url, s.cookie);
    expect(await again.status).toBe(401);
    again.close();
    // the viewer's other session (signed in at the start) and its stream are untouched
    expect((await as(users.viewer as Signed, con.url, '/api/apps')).status).toBe(200);
    expect(other.ended).toBe(false);
    other.close();
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
    expect((await as(con.admin, con.url, '/api/apps')).status).toBe(200);
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

describe('first start', () => {
  it('the one-time admin password is announced once, never logged, forces a password change on every route, and dies after the change', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'console-first-'));
    const announced: string[] = [];
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        lines.push(chunk.toString('utf8'));
        cb();
      },
    });
    // the Git URL policy is one per process: this second console keeps the sandbox's allow-list, as every console
    // a test starts does (else the suite's other console, still running, would be refused its renders)
    const env = {
      KUBECONFIG: bffKubeconfig(),
      CONSOLE_PORT: '0',
      CONSOLE_DATA_DIR: dataDir,
      LOG_LEVEL: 'debug',
      ...SANDBOX_GIT_ENV,
    };
    let c = await startConsole(loadConfig(env, []), { logStream: sink, announce: (l) => announced.push(l) });
    try {
      expect(announced.length).toBe(1);
      const otp = /^ {4}(\S{20})$/m.exec(announced[0] ?? '')?.[1] ?? '';
      expect(otp).toMatch(/^[A-Za-z0-9]{20}$/);
      const s = await signIn(c.url, 'admin', otp);
      const session = await as(s, c.url, '/api/auth/session');
      expect(session.body).toMatchObject({ mustChangePassword: true, user: { name: 'admin' } });
      // every route but the session, sign-out and password change: 403 PasswordChangeRequired
      const gated = c.routes.filter(
        (r) => !('public' in r.access) && !('signedIn' in r.access && r.access.beforePasswordChange),
      );
      expect(gated.length).toBeGreaterThanOrEqual(10);
      for (const r of gated) {
        const res = await fetch(c.url + fill(r.url), {
          method: r.method,
          headers: { Cookie: s.cookie, Origin: c.url, 'X-CSRF-Token': s.csrf },
        });
        expect(`${r.method} ${r.url} ${res.status}`).toBe(`${r.method} ${r.url} 403`);
        if (r.method !== 'HEAD') expect(await res.json()).toMatchObject({ error: { code: 'PasswordChangeRequired' } });
      }
      const next = `new-${randomBytes(12).toString('base64url')}`;
      const short = await as(s, c.url, '/api/auth/password', { method: 'POST', body: { current: otp, next: 'short' } });
      expect(short.status).toBe(400);
      const changed = await as(s, c.url, '/api/auth/password', { method: 'POST', body: { current: otp, next } });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ mustChangePassword: false });
      // the browser that changed it got a fresh session; the one-time session is gone
      expect((await as(s, c.url, '/api/apps')).status).toBe(401);
      const oldPw = await fetch(`${c.url}/api/auth/signin`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: c.url },
        body: JSON.stringify({ username: 'admin', password: otp }),
      });
      expect(oldPw.status).toBe(401);
      const fresh = await signIn(c.url, 'admin', next);
      expect((await as(fresh, c.url, '/api/apps')).status).toBe(200);
      expect((await as(fresh, c.url, '/api/auth/session')).body).toMatchObject({ mustChangePassword: false });
      // the password never reached the log, the evidence or the accounts file
      const ev = await as(fresh, c.url, '/api/evidence?limit=1000');
      expect(ev.text).toContain('auth.password-changed');
      for (const where of [lines.join(''), ev.text, readFileSync(join(dataDir, 'auth.json'), 'utf8')]) {
        expect(where).not.toContain(otp);
        expect(where).not.toContain(next);
      }
      expect(lines.length).toBeGreaterThan(0);
      expect(statSync(join(dataDir, 'auth.json')).mode & 0o077).toBe(0);
      await c.close();
      // a restart does not mint (or announce) another password: the changed one still holds
      c = await startConsole(loadConfig(env, []), { logStream: sink, announce: (l) => announced.push(l) });
      expect(announced.length).toBe(1);
      expect((await as(await signIn(c.url, 'admin', next), c.url, '/api/apps')).status).toBe(200);
    } finally {
      await c.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a Secret managed by an app', () => {
  const VALUE = `leak-probe-${randomBytes(18).toString('hex')}`;
  const B64 = Buffer.from(VALUE).toString('base64');
  const FILE = 'overlays/dev/leak-probe.yaml';
  const seen: Array<{ where: string; text: string }> = [];
  let stream: ReturnType<typeof openStream>;

  beforeAll(async () => {
    // the stream is open from before the Secret exists until after every read
    stream = openStream(con.url, con.admin.cookie);
    expect(await stream.status).toBe(200);
    const sha = commitAndPush('Add a leak probe Secret to dev', (w) => {
      writeRepoFile(
        w,
        FILE,
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: leak-probe\ntype: Opaque\nstringData:\n  token: ${VALUE}\n`,
      );
      const k = join(w, 'overlays/dev/kustomization.yaml');
      writeFileSync(k, readFileSync(k, 'utf8').replace('resources:\n', 'resources:\n  - leak-probe.yaml\n'));
    });
    await waitForKustomizationRevision('nonprod', 'digital-human-dev', sha);
  });

  afterAll(async () => {
    stream?.close();
    const sha = commitAndPush('Remove the leak probe Secret', (w) => {
      rmSync(join(w, FILE), { force: true });
      const k = join(w, 'overlays/dev/kustomization.yaml');
      writeFileSync(k, readFileSync(k, 'utf8').replace('  - leak-probe.yaml\n', ''));
    });
    // dev is governed by the console's prune admission policy (deploy/prune-admission-policy.yaml): Flux may
    // not prune the probe without an approved preview, so the clean-up deletes it as the sandbox admin
    await waitForRevisionPrunedByAdmin('nonprod', 'digital-human-dev', sha, 'dev', ['secret/leak-probe']);
    await waitFor(
      'the probe Secret pruned',
      async () => !kubectl('nonprod', ['-n', 'dev', 'get', 'secrets', '-o', 'name']).includes('secret/leak-probe'),
      { timeoutMs: 30_000 },
    );
  });

  it('its value never appears in any API response, SSE message, log line, evidence row or data file', async () => {
    // the Secret is really live with the value (the scan below is not vacuous)
    const live = JSON.parse(kubectl('nonprod', ['-n', 'dev', 'get', 'secret', 'leak-probe', '-o', 'json'])) as {
      data: { token: string };
    };
    expect(live.data.token).toBe(B64);
    // the SOPS-encrypted Secret of infra-dev (issue 26), decrypted by kustomize-controller: its value is a needle too
    const sopsLive = JSON.parse(kubectl('nonprod', ['-n', 'dev', 'get', 'secret', 'db-credentials', '-o', 'json'])) as {
      data: { DB_PASSWORD: string };
    };
    const SOPS_B64 = sopsLive.data.DB_PASSWORD;
    const SOPS_VALUE = Buffer.from(SOPS_B64, 'base64').toString('utf8');
    expect(SOPS_VALUE.length).toBeGreaterThanOrEqual(20);
    const get = async (path: string) => {
      const r = await as(con.admin, con.url, path);
      seen.push({ where: `GET ${path} (${r.status})`, text: r.text });
      return r;
    };
    await waitFor(
      'the dev app lists the Secret in its inventory',
      async () => (await get(`/api/apps/${DEV}/tree`)).text.includes('"leak-probe"'),
      { timeoutMs: 30_000 },
    );
    // a reconcile as well, so that app updates flow over the stream while the Secret is live
    expect((await as(con.admin, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' })).status).toBe(200);
    const apps = ((await get('/api/apps')).body as AppsResponse).apps;
    expect(apps.length).toBeGreaterThanOrEqual(5);
    // every GET route, for every app and every object of every tree
    const gets = con.routes.filter((r) => r.method === 'GET' && r.url !== '/api/stream');
    const covered = new Set<string>();
    for (const r of gets) {
      if (r.url.includes(':namespace')) {
        for (const a of apps) await get(fill(r.url, a.id));
      } else if (r.url === '/api/clusters/:cluster/object' || r.url === '/api/clusters/:cluster/events') {
        for (const a of apps) {
          const tree = (await as(con.admin, con.url, `/api/apps/${a.id}/tree`)).body as unknown as TreeResponse;
          for (const n of tree.nodes) {
            const q = new URLSearchParams({
              group: n.ref.group,
              version: n.ref.version,
              kind: n.ref.kind,
              ...(n.ref.namespace ? { namespace: n.ref.namespace } : {}),
              name: n.ref.name,
            });
            await get(`${r.url.replace(':cluster', n.ref.cluster)}?${q}`);
          }
        }
      } else if (r.url === '/api/evidence') {
        await get('/api/evidence?limit=1000');
      } else {
        await get(fill(r.url));
      }
      covered.add(r.url);
    }
    expect([...covered].sort()).toEqual([...new Set(gets.map((r) => r.url))].sort());
    // the console did look at the Secret: the tree and the diff have it, masked
    expect(
      seen.some((s) => s.where.startsWith('GET /api/clusters/nonprod/object?') && s.where.includes('leak-probe')),
    ).toBe(true);
    const diff = JSON.parse(
      seen.find((s) => s.where === `GET /api/apps/${DEV}/diff (200)`)?.text ?? '{}',
    ) as DiffResponse;
    const probe = diff.objects?.find((o) => o.ref.kind === 'Secret' && o.ref.name === 'leak-probe');
    expect(probe?.liveYaml ?? '').toMatch(/<secret [0-9a-f]{12}>/);
    // and at least one environment comparison rendered dev (with the Secret) without error
    const compared = seen
      .filter((s) => / \/api\/apps\/.*\/environments \(200\)$/.test(s.where))
      .map((s) => JSON.parse(s.text) as EnvCompareResponse);
    expect(compared.some((c) => c.envs.some((e) => e.env === 'dev' && e.renderHash && !e.error))).toBe(true);
    // the stream carried app updates meanwhile
    await waitFor('an app update on the stream', async () => stream.text.includes('"app-upsert"'), {
      timeoutMs: 30_000,
    });
    seen.push({ where: 'SSE /api/stream', text: stream.text });
    seen.push({ where: 'log', text: logLines.join('') });
    expect(logLines.length).toBeGreaterThan(20);
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const p = join(dir, f);
        // render-cache holds the Git artifact itself (the Secret is in Git in clear in this scenario)
        if (f === 'render-cache') return [];
        return statSync(p).isDirectory() ? files(p) : [p];
      });
    const dataFiles = files(con.dataDir);
    expect(dataFiles.some((f) => f.endsWith('evidence.sqlite'))).toBe(true);
    for (const f of dataFiles) if (existsSync(f)) seen.push({ where: f, text: readFileSync(f).toString('latin1') });
    // each leak is named with a little context (the value itself shown as <VALUE>/<B64>, <SOPS>/<SOPS_B64>)
    const needles = [VALUE, B64, SOPS_VALUE, SOPS_B64];
    const leaks = seen.flatMap((s) => {
      const i = Math.max(...needles.map((n) => s.text.indexOf(n)));
      if (i < 0) return [];
      const around = s.text.slice(Math.max(0, i - 120), i + VALUE.length + 40);
      return [
        `${s.where}: …${around
          .replaceAll(VALUE, '<VALUE>')
          .replaceAll(B64, '<B64>')
          .replaceAll(SOPS_VALUE, '<SOPS>')
          .replaceAll(SOPS_B64, '<SOPS_B64>')}…`,
      ];
    });
    expect(leaks).toEqual([]);
    // the console did show the SOPS Secret (masked): infra-dev's diff has it, encrypted in Git, its keys live
    const infraDiff = JSON.parse(
      seen.find((s) => s.where === 'GET /api/apps/nonprod/flux-system/kustomization/infra-dev/diff (200)')?.text ??
        '{}',
    ) as DiffResponse;
    const enc = infraDiff.objects?.find((o) => o.ref.kind === 'Secret' && o.ref.name === 'db-credentials');
    expect(enc?.secret?.sops?.mac).toBe(true);
    expect(enc?.secret?.keys.map((k) => [k.key, k.git, k.live])).toEqual([
      ['DB_PASSWORD', 'encrypted', 'present'],
      ['DB_USER', 'encrypted', 'present'],
    ]);
    // and flagged the probe, which is plaintext in Git: the file and the key, never the value
    const flagged = diff.render?.secretsInGit?.find((x) => x.name === 'leak-probe');
    expect(flagged).toMatchObject({ file: FILE, sops: null, keys: [{ key: 'token', git: 'plaintext' }] });
  });
});
