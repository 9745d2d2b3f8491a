// Evidence fails closed, against stores that really fail mid-run (test/support/store-outage.ts says how):
// the SQLite BFF process whose file writes the kernel refuses, and a PostgreSQL server stopped with pg_ctl.
// While the store cannot write: "reconcile now" is refused with 503 and the cluster is not touched, a
// sign-in with the right password is refused with 503 and no session; wrong passwords, denials and sign-outs
// still answer (their records wait in the queue); the console stays up (/healthz 200 showing the backlog,
// /readyz still about clusters, reads served). When the store is back, the queued records are written by
// themselves, in order, and the chain verifies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { PostgresEvidenceStore } from '../../src/server/evidence/postgres-store.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, TEST_PASSWORD, type Signed } from '../support/auth.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';
import { allowFileWrites, denyFileWrites, postgresControl, spawnBffPiped } from '../support/store-outage.ts';

// the seed's prod app (./seed.ts): no other contract file reconciles it through a console (they share the bare cluster)
const APP = 'prod/flux-system/kustomization/digital-human-prod';
const CONSOLE_MANAGER = 'gitops-console'; // the field manager of the console's "reconcile now" PATCH

interface Seen {
  requestedAt: string | undefined;
  /** the field manager owning the annotation */
  by: string | undefined;
  /** when the console last wrote this object (managedFields), if it ever did */
  consoleWroteAt: string | undefined;
}

/** What Flux was last asked, and by whom (read with the sandbox admin kubeconfig, not the console's identity). */
function seen(kind: 'kustomization' | 'gitrepository', name: string): Seen {
  const md = getJson('prod', ['-n', 'flux-system', 'get', kind, name]).metadata as {
    annotations?: Record<string, string>;
    managedFields?: Array<{ manager: string; time?: string; fieldsV1?: unknown }>;
  };
  const mf = md.managedFields ?? [];
  const owns = (f: { fieldsV1?: unknown }) =>
    JSON.stringify(f.fieldsV1 ?? {}).includes('"f:reconcile.fluxcd.io/requestedAt"');
  const consoleTimes = mf.filter((f) => f.manager === CONSOLE_MANAGER).map((f) => f.time ?? '');
  return {
    requestedAt: md.annotations?.['reconcile.fluxcd.io/requestedAt'],
    by: mf.find(owns)?.manager,
    consoleWroteAt: consoleTimes.sort().at(-1),
  };
}
const reconcileTargets = () => ({
  kustomization: seen('kustomization', 'digital-human-prod'),
  source: seen('gitrepository', 'digital-human'),
});

/**
 * The console changed nothing: its field manager wrote neither object since `before`, and the annotation is
 * the same — or, when a concurrent test nudged Flux with kubectl meanwhile, that writer's, never the console's.
 */
function expectUntouchedByConsole(before: ReturnType<typeof reconcileTargets>): void {
  const now = reconcileTargets();
  for (const k of ['kustomization', 'source'] as const) {
    const [b, n] = [before[k], now[k]];
    expect(n.consoleWroteAt === undefined || n.consoleWroteAt <= (b.consoleWroteAt ?? ''), `${k}: console wrote`).toBe(
      true,
    );
    if (n.requestedAt !== b.requestedAt) expect(n.by, `${k}: annotation writer`).not.toBe(CONSOLE_MANAGER);
  }
}

interface Health {
  ok: boolean;
  evidence: { pending: number; failing: boolean; refused: number };
}
const health = async (base: string) => {
  const r = await fetch(`${base}/healthz`);
  return { status: r.status, body: (await r.json()) as Health };
};

function signInRaw(base: string, username: string, password: string) {
  return fetch(`${base}/api/auth/signin`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: base },
    body: JSON.stringify({ username, password }),
  });
}

interface Outage {
  name: string;
  env: () => Record<string, string>;
  /** the store stops taking writes (`pid`: the BFF process) */
  fail(pid: number): Promise<void> | void;
  recover(pid: number): Promise<void> | void;
}

function failClosedSuite(o: Outage): void {
  describe(o.name, () => {
    let bff: Awaited<ReturnType<typeof spawnBffPiped>>;
    const users: Record<string, Signed> = {};
    let failed = false;

    beforeAll(async () => {
      // the release recorder writes its own observations on a timer; this test counts the ones its actions make
      bff = await spawnBffPiped({ ...o.env(), CONSOLE_RELEASE_RECORDER: 'off' });
      // sign-ins need the store: everyone used during the outage signs in before it
      for (const u of ['admin', 'developer', 'viewer', 'oncall']) users[u] = await signIn(bff.base, u);
      await waitFor(
        'the app is listed',
        async () => {
          const r = await as(users.admin as Signed, bff.base, `/api/apps/${APP}`);
          return r.status === 200;
        },
        { timeoutMs: 60_000 },
      );
      // what the start observed (revisions, health) is written before the outage begins
      await waitFor(
        'the start-up observations are written',
        async () => (await health(bff.base)).body.evidence?.pending === 0,
        { timeoutMs: 60_000 },
      );
    });

    afterAll(async () => {
      if (failed && bff) await o.recover(bff.pid);
      await bff?.stop();
    });

    it('while the store cannot write: actions are refused (503, nothing changed), observations wait, the console stays up; then the backlog is written in order and the chain verifies', async () => {
      const admin = users.admin as Signed;
      expect((await health(bff.base)).body.evidence).toEqual({ pending: 0, failing: false, refused: 0 });
      const lastBefore = ((await as(admin, bff.base, '/api/evidence?limit=1')).body.events as EvidenceEvent[])[0];
      const before = reconcileTargets();

      await o.fail(bff.pid);
      failed = true;

      // "reconcile now": refused, and the cluster never asked
      const r = await as(users.developer as Signed, bff.base, `/api/apps/${APP}/reconcile`, { method: 'POST' });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ error: { code: 'EvidenceUnavailable' } });
      expect(String((r.body.error as { message: string }).message)).toMatch(/not done; nothing changed/);
      expect(r.text).not.toMatch(/SQLITE|ECONNREFUSED|EFBIG|terminating connection/i);
      expectUntouchedByConsole(before);

      // sign-in with the right password: refused, no session cookie
      const s = await signInRaw(bff.base, 'auditor', TEST_PASSWORD);
      expect(s.status).toBe(503);
      expect(((await s.json()) as { error: { code: string } }).error.code).toBe('EvidenceUnavailable');
      expect(s.headers.get('set-cookie')).toBeNull();

      // observations still answer at once and wait in the queue, in this order
      const wrong = await signInRaw(bff.base, 'viewer', 'not the password');
      expect(wrong.status).toBe(401);
      const denied = await as(users.viewer as Signed, bff.base, `/api/apps/${APP}/reconcile`, { method: 'POST' });
      expect(denied.status).toBe(403);
      const out = await as(users.oncall as Signed, bff.base, '/api/auth/signout', { method: 'POST' });
      expect(out.status).toBe(200);
      expect((await as(users.oncall as Signed, bff.base, '/api/auth/session')).status).toBe(401);

      // the console stays up: alive with the backlog showing, ready (readiness is about clusters), reads served
      const h = await health(bff.base);
      expect(h.status).toBe(200);
      expect(h.body.evidence.failing).toBe(true);
      expect(h.body.evidence.pending).toBeGreaterThanOrEqual(3);
      expect(h.body.evidence.refused).toBe(2);
      expect((await fetch(`${bff.base}/readyz`)).status).toBe(200);
      expect((await as(admin, bff.base, `/api/apps/${APP}`)).status).toBe(200);
      // and stays so while the back-off retries fail
      await new Promise((res) => setTimeout(res, 1500));
      expect((await health(bff.base)).body.evidence).toMatchObject({ failing: true });
      expectUntouchedByConsole(before);

      // the store comes back: the queue drains by itself
      await o.recover(bff.pid);
      failed = false;
      await waitFor(
        'the evidence backlog is written',
        async () => {
          const e = (await health(bff.base)).body.evidence;
          return e.pending === 0 && !e.failing;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );

      const events = ((await as(admin, bff.base, `/api/evidence?limit=50`)).body.events as EvidenceEvent[]).filter(
        (e) => e.seq > (lastBefore?.seq ?? 0),
      );
      const written = events.reverse().map((e) => `${e.type} ${e.actor}`);
      // nothing of the refused actions, the observations in the order they happened
      expect(written).not.toContain('app.reconcile-requested developer');
      expect(written).not.toContain('auth.signed-in auditor');
      const order = ['auth.failed viewer', 'access.denied viewer', 'auth.signed-out oncall'];
      expect(written.filter((w) => order.includes(w))).toEqual(order);
      const seqs = new Set(events.map((e) => e.seq));
      expect(seqs.size).toBe(events.length);
      const v = await as(admin, bff.base, '/api/evidence/verify');
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ ok: true });

      // and actions work again: the reconcile now reaches the cluster, after its intent
      const again = await as(users.developer as Signed, bff.base, `/api/apps/${APP}/reconcile`, { method: 'POST' });
      expect(again.status).toBe(200);
      expect(reconcileTargets().kustomization).toMatchObject({
        requestedAt: again.body.requestedAt,
        by: CONSOLE_MANAGER,
      });
      expect((await signInRaw(bff.base, 'auditor', TEST_PASSWORD)).status).toBe(200);
      const after = ((await as(admin, bff.base, '/api/evidence?limit=20')).body.events as EvidenceEvent[])
        .reverse()
        .filter((e) => e.actor === 'developer' || e.actor === 'auditor')
        .map((e) => `${e.type} ${e.actor}`);
      expect(after.slice(-4)).toEqual([
        'app.reconcile-requested developer',
        'action.completed developer',
        'auth.signed-in auditor',
        'action.completed auditor',
      ]);
    });
  });
}

failClosedSuite({
  name: 'SQLite: the kernel refuses the BFF process every file write (RLIMIT_FSIZE 0 → EFBIG → SQLITE_IOERR)',
  env: () => ({}),
  fail: (pid) => denyFileWrites(pid),
  recover: (pid) => allowFileWrites(pid),
});

let pgServer: PgServer | undefined;
let pgCtl: Awaited<ReturnType<typeof postgresControl>> | undefined;
beforeAll(async () => {
  pgServer = await startPostgres();
  pgCtl = await postgresControl(pgServer.url);
});
afterAll(async () => {
  await pgServer?.stop();
});

failClosedSuite({
  name: 'PostgreSQL: the server is stopped mid-run (pg_ctl stop -m fast), then started again',
  env: () => ({ DATABASE_URL: pgServer?.url ?? '' }),
  fail: () => pgCtl?.stop(),
  recover: () => pgCtl?.start(),
});

describe('PostgreSQL store: the server drops a connection an append holds', () => {
  it("that append fails (the process does not crash on the client's error event) and the next ones reconnect", async () => {
    const url = pgServer?.url ?? '';
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('CREATE DATABASE store_drop');
    await admin.end();
    const store = await PostgresEvidenceStore.open(url.replace(/\/postgres$/, '/store_drop'));
    const e = (n: number) => ({
      time: new Date().toISOString(),
      type: 'cluster.lost' as const,
      actor: 't',
      data: { n },
    });
    try {
      await store.append(e(1)); // leaves one idle connection in the pool
      // pg_ctl blocks this process while the server closes that connection: the next append checks it out
      // before its end is noticed, so the connection dies while the append holds it (no idle listener then)
      pgCtl?.stop();
      await expect(store.append(e(2))).rejects.toThrow();
      pgCtl?.start();
      await store.append(e(3));
      expect((await store.list()).map((x) => x.data.n)).toEqual([3, 1]);
      expect(await store.verify()).toMatchObject({ ok: true, count: 2 });
    } finally {
      await store.close();
    }
  });
});
