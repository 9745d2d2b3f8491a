// Issue #21 items 3 and 8, against the real sandbox and a real OpenID provider: "not the same person" compares
// people, not names — a local account and the SSO identity an admin linked to it (or whose issuer verified the
// account's email) cannot give both approvals of an override prune, one after the other or at once — and a refused
// attempt records no intent: a repeated approval adds no `prune.approved`, and of twelve concurrent approvals by
// different reviewers exactly the two needed are recorded, the rest are one `action.refused` each.
// The app is the file's own estate on prod (test/support/prod-probe-estate.ts: Flux `prune: false`, like the seed's
// prod): five probe ConfigMaps removed from Git stay live, and a preview deleting them is over the 25% limit (an
// override: two approvers). The estate is deleted at the end.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { freePort, waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { startOidcProvider, type OidcUser, type TestOidcProvider } from '../support/oidc-provider.ts';
import { prodProbeEstate, type ProdProbeEstate } from '../support/prod-probe-estate.ts';

const PROBES = Array.from({ length: 5 }, (_, i) => `people-probe-${i}`);
const REVIEWERS = Array.from({ length: 10 }, (_, i) => `prod-reviewer-${i + 1}`);

let probes: ProdProbeEstate | undefined;
let idp: TestOidcProvider;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let alice: Signed;
let carol: Signed;
let reviewers: Signed[] = [];

type Preview = {
  id: string;
  status: string;
  plan: string;
  confirmation: string | null;
  requiredApprovals: number;
  candidates: Array<{ ref: { name: string }; deletable: boolean }>;
  decisions: Array<{ name: string; issuer: string; subject: string }>;
  journal: Array<{ state: string }>;
};

const live = (): string[] => [...(probes as ProdProbeEstate).liveProbes()];

/** The browser's SSO sign-in: console → provider (auto-approves `u`) → callback; the session as `as()` uses it. */
async function ssoSignIn(u: OidcUser): Promise<Signed> {
  idp.setUser(u);
  const s = await fetch(`${con.url}/api/auth/oidc/start?next=/`, { redirect: 'manual' });
  const state = (s.headers.getSetCookie().find((c) => c.startsWith('console_oidc=')) ?? '').split(';')[0] ?? '';
  const a = await fetch(s.headers.get('location') ?? '', { redirect: 'manual' });
  const r = await fetch(a.headers.get('location') ?? '', { redirect: 'manual', headers: { Cookie: state } });
  expect(r.status, await r.clone().text()).toBe(200);
  const cookie = (r.headers.getSetCookie().find((c) => c.startsWith('console_session=')) ?? '').split(';')[0] ?? '';
  const body = (await (await fetch(`${con.url}/api/auth/session`, { headers: { Cookie: cookie } })).json()) as {
    csrfToken: string;
    user: { name: string };
  };
  return { user: body.user.name, cookie, csrf: body.csrfToken };
}

async function request(): Promise<Preview> {
  const r = await as(developer, con.url, `/api/apps/${(probes as ProdProbeEstate).app}/prune-previews`, {
    method: 'POST',
  });
  expect(r.status, r.text).toBe(200);
  const p = (r.body as { preview: Preview }).preview;
  // exactly our probes (anything else would be a mistake of the set-up: stop before approving it)
  expect(
    p.candidates
      .filter((c) => c.deletable)
      .map((c) => c.ref.name)
      .sort(),
  ).toEqual([...PROBES].sort());
  expect(p).toMatchObject({ plan: 'needs-override', status: 'pending', requiredApprovals: 2 });
  return p;
}

const approve = (who: Signed, p: Preview) =>
  as(who, con.url, `/api/prune-previews/${p.id}/approve`, {
    method: 'POST',
    body: { comment: `approved by ${who.user}`, confirmation: p.confirmation },
  });

async function view(id: string): Promise<Preview> {
  return ((await as(con.admin, con.url, `/api/prune-previews/${id}`)).body as { preview: Preview }).preview;
}

/** This preview's evidence by type. */
async function evidence(id: string) {
  const of = async (type: string) =>
    ((await as(con.admin, con.url, `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] }).events
      .filter((e) => e.data.previewId === id)
      .reverse();
  const completed = await of('action.completed');
  const failed = await of('action.failed');
  return {
    approved: await of('prune.approved'),
    refused: await of('action.refused'),
    completed: completed.filter((e) => e.data.action === 'prune.approved'),
    failed: failed.filter((e) => e.data.action === 'prune.approved'),
  };
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
        users: {
          'prod-developer': ['developer@prod/prod'],
          alice: ['reviewer@prod/prod'],
          carol: ['reviewer@prod/prod'],
          ...Object.fromEntries(REVIEWERS.map((n) => [n, ['reviewer@prod/prod']])),
        },
        groups: { 'prod-reviewers': ['reviewer@prod/prod'] },
      },
    },
  );
  // the admin links the SSO identity `alice` to the local account alice, and vouches for carol's email
  const authFile = join(con.dataDir, 'auth.json');
  const accounts = JSON.parse(readFileSync(authFile, 'utf8')) as { users: Array<Record<string, unknown>> };
  for (const u of accounts.users) {
    if (u.name === 'alice') u.identities = [{ issuer: idp.issuer, subject: 'alice' }];
    if (u.name === 'carol') u.email = 'carol@example.com';
  }
  writeFileSync(authFile, JSON.stringify(accounts));
  developer = await signIn(con.url, 'prod-developer');
  alice = await signIn(con.url, 'alice');
  carol = await signIn(con.url, 'carol');
  reviewers = [];
  for (const n of REVIEWERS) reviewers.push(await signIn(con.url, n));

  probes = await prodProbeEstate({ name: 'prune-people', probes: PROBES });
  await probes.consoleAt(con.url, con.admin);
}, 600_000);

afterAll(async () => {
  try {
    await probes?.teardown();
  } finally {
    await con?.close();
    await idp?.close();
  }
}, 300_000);

describe('people, not names; intent only for what may happen', () => {
  let oidcAlice: Signed;
  const reject = async (p: Preview) => {
    const r = await as(reviewers[9] as Signed, con.url, `/api/prune-previews/${p.id}/reject`, {
      method: 'POST',
      body: { comment: 'test over' },
    });
    expect(r.status, r.text).toBe(200);
  };

  it('alice approves; again she (and her linked SSO identity oidc:alice) adds no prune.approved — one action.refused each', async () => {
    oidcAlice = await ssoSignIn({ sub: 'alice', groups: ['prod-reviewers'] });
    expect(oidcAlice.user).toBe('oidc:alice');
    const p = await request();
    expect((await approve(alice, p)).status).toBe(200);
    for (const who of [alice, oidcAlice]) {
      const again = await approve(who, p);
      expect(again.status, again.text).toBe(409);
      expect(again.text).toContain('you already decided on this prune');
    }
    const v = await view(p.id);
    expect(v.status).toBe('pending');
    expect(v.decisions.map((d) => d.name)).toEqual(['alice']);
    const ev = await evidence(p.id);
    expect(ev.approved).toHaveLength(1);
    expect(ev.failed).toEqual([]);
    expect(ev.refused.map((e) => [e.actor, e.data.action, e.data.reason])).toEqual([
      ['alice', 'prune.approved', 'you already decided on this prune'],
      ['oidc:alice', 'prune.approved', 'you already decided on this prune'],
    ]);
    // evidence names the identity and the person: local alice and oidc:alice are one person
    const approver = ev.approved[0]?.data.approver as { issuer: string; subject: string; person: string };
    expect(approver.issuer).toBe('console:local');
    expect(ev.refused[1]?.data.who).toMatchObject({ issuer: idp.issuer, subject: 'alice', person: approver.person });
    await reject(p);
  });

  it('local alice and oidc:alice at once: one approval, the other refused; nothing executes', async () => {
    const p = await request();
    const answers = await Promise.all([approve(alice, p), approve(oidcAlice, p)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const v = await view(p.id);
    expect(v.status).toBe('pending');
    expect(v.decisions).toHaveLength(1);
    const ev = await evidence(p.id);
    expect(ev.approved).toHaveLength(1);
    expect(ev.refused).toHaveLength(1);
    expect(ev.failed).toEqual([]);
    expect(live()).toHaveLength(PROBES.length);
    await reject(p);
  });

  it("an SSO identity whose issuer verified carol's email is carol: it cannot give the second approval", async () => {
    const sso = await ssoSignIn({
      sub: 'c-7',
      email: 'carol@example.com',
      emailVerified: true,
      groups: ['prod-reviewers'],
    });
    const p = await request();
    expect((await approve(carol, p)).status).toBe(200);
    const second = await approve(sso, p);
    expect(second.status, second.text).toBe(409);
    expect((await view(p.id)).status).toBe('pending');
    expect((await evidence(p.id)).approved).toHaveLength(1);
    await reject(p);
  });

  it('twelve concurrent approvals by different reviewers: exactly the two needed are recorded, the rest action.refused', async () => {
    const p = await request();
    const twelve = [alice, carol, ...reviewers.slice(0, 10)];
    expect(new Set(twelve.map((s) => s.user)).size).toBe(12);
    const answers = await Promise.all(twelve.map((who) => approve(who, p)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(10);
    let done: Preview | undefined;
    await waitFor(
      'the prune executed',
      async () => !['approved', 'executing'].includes((done = await view(p.id)).status),
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    expect(done?.status).toBe('done');
    expect(done?.decisions).toHaveLength(2);
    const ev = await evidence(p.id);
    expect(ev.approved).toHaveLength(2);
    expect(ev.completed).toHaveLength(2);
    expect(ev.failed).toEqual([]);
    expect(ev.refused).toHaveLength(10);
    for (const e of ev.refused) expect(e.data).toMatchObject({ action: 'prune.approved', reason: expect.any(String) });
    await waitFor('probes deleted', async () => live().length === 0, { timeoutMs: 30_000 });
  });
});
