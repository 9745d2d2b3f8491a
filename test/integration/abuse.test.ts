// Abuse of the identity layer itself (from the security review): account lockout from elsewhere, secrets typed
// into the wrong box, evidence flooding, path traversal through object references, and accounts removed or
// demoted while their sessions are open. Client addresses come from X-Forwarded-For (CONSOLE_TRUST_PROXY).
// The app denied, reconciled and read, and the hostile YAML's repository, are the file's own estate (a dev app).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/state.ts';
import { getJson as kubeJson, writeRepoFile } from '../../sandbox/scenario.ts';
import { as, signIn, TEST_PASSWORD } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

let estate: Estate;
/** the estate's Flux app (env dev): what the seed's digital-human-dev was here */
let DEV: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;

beforeAll(async () => {
  estate = await ownEstate({ name: 'abuse', env: 'dev', files: digitalHumanTemplate('dev') });
  DEV = estate.appId();
  con = await startTestConsole(
    { CONSOLE_TRUST_PROXY: '127.0.0.1' },
    { accounts: { users: { 'viewer-2': ['viewer'], 'developer-2': ['developer'] } } },
  );
  await waitFor(
    'the estate app listed',
    async () => (await as(con.admin, con.url, `/api/apps/${DEV}`)).status === 200,
    {
      timeoutMs: 60_000,
      intervalMs: 500,
    },
  );
}, 300_000);
afterAll(async () => {
  await con?.close();
  await estate?.teardown();
}, 120_000);

const signInFrom = (address: string, username: string, password: string) =>
  fetch(`${con.url}/api/auth/signin`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Console-Request': '1',
      Origin: con.url,
      'X-Forwarded-For': address,
    },
    body: JSON.stringify({ username, password }),
  });

async function evidence(type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}

describe('abuse of sign-in and evidence', () => {
  it('locking an account from elsewhere: 8 wrong passwords from one address do not stop the owner from another', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await signInFrom('203.0.113.7', 'oncall', `guess-${i}`)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    // the attacker's address is throttled even with the right password…
    const attacker = await signInFrom('203.0.113.7', 'oncall', TEST_PASSWORD);
    expect(attacker.status).toBe(429);
    expect(Number(attacker.headers.get('retry-after'))).toBeGreaterThan(0);
    // …the owner, elsewhere, is not
    expect((await signInFrom('198.51.100.2', 'oncall', TEST_PASSWORD)).status).toBe(200);
  });

  it('a password typed into the user-name box is never written into the evidence chain', async () => {
    const typed = `Hunter2-${Date.now().toString(36)}!`;
    expect((await signInFrom('192.0.2.10', typed, 'x')).status).toBe(401);
    expect((await signInFrom('192.0.2.10', 'auditor', 'wrong')).status).toBe(401);
    const failed = await evidence('auth.failed');
    expect(JSON.stringify(failed)).not.toContain(typed);
    expect(failed.slice(0, 2).map((e) => e.actor)).toEqual(['auditor', 'unknown user']);
  });

  it('one denied page visit (the app, its tree, its diff) is one access.denied row', async () => {
    const outsider = await signIn(con.url, 'staging-viewer');
    const before = (await evidence('access.denied')).filter((e) => e.actor === 'staging-viewer').length;
    for (const suffix of ['', '/tree', '/diff'])
      expect((await as(outsider, con.url, `/api/apps/${DEV}${suffix}`)).status).toBe(403);
    const rows = (await evidence('access.denied')).filter((e) => e.actor === 'staging-viewer');
    expect(rows.length - before).toBe(1);
    expect(rows[0]).toMatchObject({ app: DEV, data: { action: 'app.read', method: 'GET' } });
  });

  it('flooding the evidence chain: 40 identical denials make one access.denied row, 40 stray SSO callbacks none', async () => {
    const viewer = await signIn(con.url, 'viewer');
    const before = (await evidence('access.denied')).length;
    for (let i = 0; i < 40; i++)
      expect((await as(viewer, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' })).status).toBe(403);
    const after = await evidence('access.denied');
    expect(after.length - before).toBe(1);
    expect(after[0]).toMatchObject({ actor: 'viewer', app: DEV, data: { action: 'app.reconcile' } });
    // a different denial is its own row
    expect((await as(viewer, con.url, '/api/evidence')).status).toBe(403);
    expect((await evidence('access.denied')).length - before).toBe(2);
    const failedBefore = (await evidence('auth.failed')).length;
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`${con.url}/api/auth/oidc/callback?state=s${i}&code=c${i}`, {
        headers: { 'X-Forwarded-For': '192.0.2.99' },
      });
      expect([401, 404, 429]).toContain(r.status);
    }
    expect((await evidence('auth.failed')).length).toBe(failedBefore);
  });

  it('path traversal through an object reference is refused with 400 before any apiserver request', async () => {
    const viewer = await signIn(con.url, 'viewer');
    for (const q of [
      'group=..&version=../api/v1/namespaces/kube-system/secrets&kind=Whatever&name=x&namespace=default',
      'group=apps&version=v1&kind=Deployment&namespace=..%2Fkube-system&name=x',
      `group=apps&version=v1&kind=Deployment&namespace=${estate.namespace}&name=..`,
      `group=apps&version=v1&kind=Deployment&namespace=${estate.namespace}&name=a%2Fb`,
      `group=apps%2Fv1&version=v1&kind=Deployment&namespace=${estate.namespace}&name=x`,
      `group=apps&version=v1&kind=Deploy%2Fment&namespace=${estate.namespace}&name=x`,
    ]) {
      const r = await as(viewer, con.url, `/api/clusters/nonprod/object?${q}`);
      expect(r.status, q).toBe(400);
      expect((await as(viewer, con.url, `/api/clusters/nonprod/events?${q}`)).status, q).toBe(400);
    }
    const ok = await as(
      viewer,
      con.url,
      `/api/clusters/nonprod/object?group=apps&version=v1&kind=Deployment&namespace=${estate.namespace}&name=render-worker`,
    );
    expect(ok.status).toBe(200);
  });
});

describe('accounts changed while signed in', () => {
  const file = () => join(con.dataDir, 'auth.json');
  const edit = (f: (d: { users: Array<{ name: string; grants: unknown[] }> }) => void) => {
    const d = JSON.parse(readFileSync(file(), 'utf8')) as { users: Array<{ name: string; grants: unknown[] }> };
    f(d);
    writeFileSync(file(), JSON.stringify(d));
  };

  it('a demoted developer cannot reconcile any more, without signing in again', async () => {
    const dev = await signIn(con.url, 'developer-2');
    const ann = () =>
      (
        kubeJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', estate.kustomization()]).metadata as {
          annotations?: Record<string, string>;
        }
      ).annotations?.['reconcile.fluxcd.io/requestedAt'];
    expect((await as(dev, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' })).status).toBe(200);
    edit((d) => {
      const u = d.users.find((x) => x.name === 'developer-2');
      if (u) u.grants = [{ role: 'viewer', clusters: ['*'], envs: ['*'] }];
    });
    const before = ann();
    const r = await as(dev, con.url, `/api/apps/${DEV}/reconcile`, { method: 'POST' });
    expect(r.status).toBe(403);
    expect(ann()).toBe(before);
    expect(((await as(dev, con.url, '/api/auth/session')).body.user as { grants: unknown[] }).grants).toEqual([
      { role: 'viewer', clusters: ['*'], envs: ['*'] },
    ]);
  });

  it('a removed account is signed out at once, and its open event stream is cut', async () => {
    const v = await signIn(con.url, 'viewer-2');
    const ac = new AbortController();
    const res = await fetch(`${con.url}/api/stream`, { headers: { Cookie: v.cookie }, signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    const ended = (async () => {
      for (;;) if ((await reader?.read())?.done !== false) return true;
    })();
    edit((d) => {
      d.users = d.users.filter((x) => x.name !== 'viewer-2');
    });
    expect((await as(v, con.url, '/api/apps')).status).toBe(401);
    // the stream re-checks its session at its next heartbeat (15 s)
    const cut = await Promise.race([ended, new Promise((r) => setTimeout(() => r(false), 25_000))]);
    ac.abort();
    expect(cut).toBe(true);
  }, 40_000);
});

describe('hostile YAML in Git', () => {
  it('a billion-laughs document in an app\'s Git path: the diff answers quickly with "desired state unknown", and the BFF stays up', async () => {
    const lol = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: lol}',
      'data:',
      '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ];
    for (let i = 1; i < 9; i++) {
      const prev = i === 1 ? 'a' : `l${i - 1}`;
      lol.push(`  l${i}: &l${i} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const sha = estate.push('Add a billion laughs', (w) =>
      writeRepoFile(w, 'argo/lol/lol.yaml', `${lol.join('\n')}\n`),
    );
    const ns = estate.namespace;
    kubectl(
      estate.cluster,
      ['apply', '--server-side', '--field-manager=abuse-test', '-f', '-'],
      JSON.stringify({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        // outside Argo CD's namespace (in the estate's): its real controller leaves it alone (the status below is
        // the test's), so this stays a test of the console's parser, not of Argo CD's repo-server
        metadata: { name: 'lol-probe', namespace: ns, labels: { env: 'dev' } },
        spec: {
          project: 'default',
          source: { repoURL: estate.forge.repo.cloneUrl, path: 'argo/lol', targetRevision: 'main' },
          destination: { server: 'https://kubernetes.default.svc', namespace: ns },
        },
      }),
    );
    kubectl(estate.cluster, [
      ...['-n', ns, 'patch', 'application', 'lol-probe', '--type', 'merge', '-p'],
      JSON.stringify({
        status: { sync: { status: 'Synced', revision: sha }, health: { status: 'Healthy' }, sourceType: 'Directory' },
      }),
    ]);
    // (the Application goes with the estate's namespace)
    const id = `${estate.cluster}/${ns}/application/lol-probe`;
    let r = await as(con.admin, con.url, `/api/apps/${id}`);
    for (let i = 0; i < 60 && r.status !== 200; i++) {
      await new Promise((res) => setTimeout(res, 500));
      r = await as(con.admin, con.url, `/api/apps/${id}`);
    }
    expect(r.status).toBe(200);
    const t0 = Date.now();
    const d = await as(con.admin, con.url, `/api/apps/${id}/diff`);
    const ms = Date.now() - t0;
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ state: 'unknown' });
    expect(String((d.body as { error?: string }).error)).toMatch(/alias/i);
    expect(ms).toBeLessThan(10_000);
    expect((await fetch(`${con.url}/healthz`)).status).toBe(200);
  });
});

describe('behind a TLS proxy (CONSOLE_PUBLIC_URL=https://…)', () => {
  it('cookie tossing: the session cookie is __Host- and Secure; a planted plain console_session cookie is ignored', async () => {
    const pub = 'https://console.example.test';
    const tls = await startTestConsole({ CONSOLE_PUBLIC_URL: pub });
    try {
      const r = await fetch(`${tls.url}/api/auth/signin`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: pub },
        body: JSON.stringify({ username: 'viewer', password: TEST_PASSWORD }),
      });
      expect(r.status).toBe(200);
      const set = r.headers.get('set-cookie') ?? '';
      expect(set).toMatch(/^__Host-console_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
      const value = set.split(';')[0]?.split('=')[1] ?? '';
      // the same id under the plain name (what a sibling subdomain could plant) does not authenticate
      expect((await fetch(`${tls.url}/api/apps`, { headers: { Cookie: `console_session=${value}` } })).status).toBe(
        401,
      );
      expect(
        (await fetch(`${tls.url}/api/apps`, { headers: { Cookie: `__Host-console_session=${value}` } })).status,
      ).toBe(200);
      // the console's own http origin is not its public origin: a mutation from it is cross-site
      const csrf = (
        (await (
          await fetch(`${tls.url}/api/auth/session`, { headers: { Cookie: `__Host-console_session=${value}` } })
        ).json()) as { csrfToken: string }
      ).csrfToken;
      const out = (origin: string) =>
        fetch(`${tls.url}/api/auth/signout`, {
          method: 'POST',
          headers: { Cookie: `__Host-console_session=${value}`, 'X-CSRF-Token': csrf, Origin: origin },
        });
      expect((await out(tls.url)).status).toBe(403);
      const signedOut = await out(pub);
      expect(signedOut.status).toBe(200);
      expect(signedOut.headers.get('set-cookie')).toMatch(/^__Host-console_session=; .*Max-Age=0; Secure$/);
    } finally {
      await tls.close();
    }
  });
});
