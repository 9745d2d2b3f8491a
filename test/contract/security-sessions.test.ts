// Identity and access against the contract tier's bare cluster, sessions: 401 on every route without (or with a
// forged) session, sign-out cuts streams, and the first-start admin. Every route is called on this file's own app:
// a bare estate (./bare-estate.ts) holding one ConfigMap in a namespace of its own, env dev, so that a route wrongly
// let through changes nothing another file reads. (Roles, CSRF and limits: test/integration/security.test.ts.)
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../sandbox/procs.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole } from '../../src/server/main.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { SANDBOX_GIT_ENV } from '../support/bff-process.ts';
import { startTestConsole } from '../support/console.ts';
import { bffKubeconfig } from '../support/kubeconfig.ts';
import { fill, openStream } from '../support/security.ts';
import { bareEstate, type BareEstate } from './bare-estate.ts';

const PROBE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: sessions-probe
data:
  probe: sessions
`;

let estate: BareEstate;
let con: Awaited<ReturnType<typeof startTestConsole>>;
const users: Record<string, Signed> = {};

beforeAll(async () => {
  estate = bareEstate({ name: 'security-sessions', env: 'dev', objects: [PROBE] });
  con = await startTestConsole();
  await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 60_000 });
  users.viewer = await signIn(con.url, 'viewer');
}, 120_000);

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
});

describe('sessions', () => {
  const guarded = () =>
    con.routes
      .filter((r) => !('public' in r.access))
      .map((r) => ({ method: r.method, path: fill(r.url, estate.appId()) }));

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

describe('first start', () => {
  it('the one-time admin password is written once to a 0600 file (never announced or logged), forces a password change on every route, and dies after the change', async () => {
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
      // neither the release recorder (it would render every app of every cluster) nor the other cluster: the
      // first start is about the admin password, as startTestConsole's consoles are started
      CONSOLE_RELEASE_RECORDER: 'off',
      CONSOLE_CONTEXTS: estate.cluster,
      ...SANDBOX_GIT_ENV,
    };
    let c = await startConsole(loadConfig(env, []), { logStream: sink, announce: (l) => announced.push(l) });
    try {
      // outside sandbox mode stdout is a log: the announcement names a 0600 file, the password is only there
      expect(announced.length).toBe(1);
      const file = join(dataDir, 'initial-admin-password');
      expect(announced[0]).toContain(file);
      expect(statSync(file).mode & 0o077).toBe(0);
      const otp = readFileSync(file, 'utf8').trim();
      expect(otp).toMatch(/^[A-Za-z0-9]{20}$/);
      expect(announced[0]).not.toContain(otp);
      const s = await signIn(c.url, 'admin', otp);
      const session = await as(s, c.url, '/api/auth/session');
      expect(session.body).toMatchObject({ mustChangePassword: true, user: { name: 'admin' } });
      // every route but the session, sign-out and password change: 403 PasswordChangeRequired
      const gated = c.routes.filter(
        (r) => !('public' in r.access) && !('signedIn' in r.access && r.access.beforePasswordChange),
      );
      expect(gated.length).toBeGreaterThanOrEqual(10);
      for (const r of gated) {
        const res = await fetch(c.url + fill(r.url, estate.appId()), {
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
      // spent: the file is gone with it
      expect(existsSync(file)).toBe(false);
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
