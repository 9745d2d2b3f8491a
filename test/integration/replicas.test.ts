// Issue #10, replicas: two BFF processes on one PostgreSQL behind a round-robin proxy (no sticky sessions).
// Sign in through one replica and act through the other; both replicas' event streams see each state change
// (PostgreSQL LISTEN/NOTIFY); the replica running an approved prune is killed (SIGKILL) half-way: the other
// one reports exactly what was and was not deleted, the rest is pruned by a new preview, nothing is lost and
// nothing is deleted twice. The app is the file's own estate on prod (test/support/prod-probe-estate.ts: Flux
// `prune: false`, like the seed's prod), so the console deletes itself.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { spawnBff } from '../support/bff-process.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';
import { prodProbeEstate, type ProdProbeEstate } from '../support/prod-probe-estate.ts';
import { startRoundRobin, type RoundRobin } from '../support/round-robin-proxy.ts';

const N = 150;
const names = Array.from({ length: N }, (_, i) => `replica-probe-${String(i).padStart(3, '0')}`);
const USERS = {
  'prod-developer': ['developer@prod/prod'],
  'prod-reviewer': ['reviewer@prod/prod'],
  'prod-reviewer-2': ['reviewer@prod/prod'],
  // only the throttle test signs in as this one (it ends locked out for five minutes)
  'prod-guesser': ['developer@prod/prod'],
};

type Bff = Awaited<ReturnType<typeof spawnBff>>;
let probes: ProdProbeEstate | undefined;
let pgServer: PgServer | undefined;
let replicas: Bff[] = [];
let proxy: RoundRobin | undefined;

type Preview = {
  id: string;
  status: string;
  statusReason: string | null;
  plan: string;
  confirmation: string | null;
  candidates: Array<{ ref: { name: string } }>;
  journal: Array<{ object: string; state: string }>;
};

const liveProbes = (): Set<string> => (probes as ProdProbeEstate).liveProbes();
/** the estate's app id in the console */
const app = () => (probes as ProdProbeEstate).app;
const nameOf = (object: string) => object.split('/').pop() ?? object;

/** An event stream read in the background: every message, and which backend the proxy chose for it. */
async function openStream(base: string, s: Signed) {
  const ac = new AbortController();
  const r = await fetch(`${base}/api/stream`, { headers: { Cookie: s.cookie }, signal: ac.signal });
  if (r.status !== 200 || !r.body) throw new Error(`stream: HTTP ${r.status}`);
  const messages: Array<Record<string, unknown>> = [];
  let ended = false;
  void (async () => {
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (data) messages.push(JSON.parse(data) as Record<string, unknown>);
        }
      }
    } catch {
      /* aborted, or the replica died */
    } finally {
      ended = true;
    }
  })();
  return {
    backend: Number(r.headers.get('x-test-backend')),
    messages,
    ended: () => ended,
    close: () => ac.abort(),
    /** state messages about one record */
    about: (id: string) => messages.filter((m) => m.type === 'state' && m.id === id),
  };
}

beforeAll(async () => {
  pgServer = await startPostgres();
  probes = await prodProbeEstate({ name: 'replicas', probes: names });
  const env = {
    DATABASE_URL: pgServer.url,
    // a journal idle 4 s belongs to a dead replica (default 120 s)
    CONSOLE_PRUNE_STALE_SECONDS: '4',
    CONSOLE_RELEASE_RECORDER: 'off',
  };
  // one after the other: the first creates the schema (each kept at once, for afterAll to stop)
  replicas = [];
  for (const name of ['replica-a', 'replica-b'])
    replicas.push(await spawnBff(name, { accounts: { users: USERS }, env }));
  for (const bff of replicas) await probes.consoleAt(bff.base, bff.admin);
  proxy = await startRoundRobin(replicas.map((r) => r.base));
}, 600_000);

afterAll(async () => {
  try {
    await proxy?.close();
    for (const r of replicas)
      if (r.child.exitCode === null && r.child.signalCode === null) await r.stop().catch(() => undefined);
    await probes?.teardown();
  } finally {
    for (const r of replicas) rmSync(r.dataDir, { recursive: true, force: true });
    await pgServer?.stop();
  }
}, 300_000);

describe('two replicas on one PostgreSQL behind a round-robin proxy', () => {
  it('five wrong passwords spread over both replicas lock the sixth try on either (the throttle counts in PostgreSQL)', async () => {
    const [a, b] = replicas as [Bff, Bff];
    const attempt = async (base: string, password: string) =>
      (
        await fetch(`${base}/api/auth/signin`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: base },
          body: JSON.stringify({ username: 'prod-guesser', password }),
        })
      ).status;
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) seen.push(await attempt((i % 2 ? b : a).base, `wrong-${i}`));
    expect(seen).toEqual([401, 401, 401, 401, 401]);
    // a counter per process had seen two or three here: each replica would still take guesses
    expect(await attempt(b.base, 'wrong-5')).toBe(429);
    await expect(signIn(a.base, 'prod-guesser')).rejects.toThrow(/429/);
  });

  it('sign in through one, act through the other, both streams see it; kill the executor mid-prune: nothing lost, nothing done twice', async () => {
    const lb = proxy as RoundRobin;
    const base = lb.url;
    const lastBackend = () => lb.served.at(-1)?.backend;

    // a session started on one replica is served by the other
    const developer = await signIn(base, 'prod-developer');
    const signedInOn = lastBackend();
    const me = await as(developer, base, '/api/auth/session');
    expect(me.status, me.text).toBe(200);
    expect(lastBackend()).not.toBe(signedInOn);
    const reviewers = [await signIn(base, 'prod-reviewer'), await signIn(base, 'prod-reviewer-2')];

    // one stream on each replica
    const s1 = await openStream(base, developer);
    const s2 = await openStream(base, developer);
    expect(new Set([s1.backend, s2.backend])).toEqual(new Set([0, 1]));
    const streams = [s1, s2].sort((a, b) => a.backend - b.backend);

    // the preview through one replica; both streams hear of it
    const created = await as(developer, base, `/api/apps/${app()}/prune-previews`, { method: 'POST' });
    expect(created.status, created.text).toBe(200);
    const preview = (created.body as { preview: Preview }).preview;
    expect(preview.plan).toBe('needs-override');
    expect(preview.candidates.map((c) => c.ref.name).sort()).toEqual(names);
    await waitFor('both streams announce the preview', async () => streams.every((s) => s.about(preview.id).length), {
      timeoutMs: 10_000,
      intervalMs: 100,
    });

    // two approvals, each through whichever replica the proxy picks; the last one starts the prune there
    const approve = (i: number) =>
      as(reviewers[i] as Signed, base, `/api/prune-previews/${preview.id}/approve`, {
        method: 'POST',
        body: { comment: 'replica test', confirmation: preview.confirmation },
      });
    expect((await approve(0)).status).toBe(200);
    const last = await approve(1);
    expect(last.status, last.text).toBe(200);
    const executor = lastBackend() as number;
    const survivor = 1 - executor;
    const direct = (i: number, path: string) => as((replicas[i] as Bff).admin, (replicas[i] as Bff).base, path);

    // kill the executor half-way
    await waitFor(
      'the prune under way',
      async () => {
        const p = ((await direct(survivor, `/api/prune-previews/${preview.id}`)).body as { preview: Preview }).preview;
        if (p.status === 'done') throw new Error('the prune finished before the kill: make it longer (N)');
        const states = p.journal.map((j) => j.state);
        return states.includes('deleted') && states.includes('planned');
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    const survivorStream = streams[survivor] as (typeof streams)[number];
    const heardBeforeKill = survivorStream.about(preview.id).length;
    const dead = replicas[executor] as Bff;
    dead.child.kill('SIGKILL');
    await new Promise((r) =>
      dead.child.exitCode !== null || dead.child.signalCode ? r(null) : dead.child.once('exit', r),
    );
    const liveAtKill = liveProbes();
    expect(liveAtKill.size).toBeGreaterThan(0);
    expect(liveAtKill.size).toBeLessThan(N);

    // the survivor finds the journal idle (4 s) and reports it exactly, without a restart; its stream hears it
    let after: Preview | undefined;
    await waitFor(
      'the interrupted prune reported by the other replica',
      async () => {
        after = ((await direct(survivor, `/api/prune-previews/${preview.id}`)).body as { preview: Preview }).preview;
        return after.status !== 'executing';
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    const p = after as Preview;
    expect(p.status).toBe('failed');
    const liveNow = liveProbes();
    expect([...liveNow].sort()).toEqual([...liveAtKill].sort());
    const deleted = p.journal.filter((j) => j.state === 'deleted').map((j) => nameOf(j.object));
    const notDeleted = p.journal.filter((j) => j.state === 'not-deleted').map((j) => nameOf(j.object));
    expect(deleted.length + notDeleted.length).toBe(N);
    expect(new Set(notDeleted)).toEqual(liveNow);
    await waitFor(
      "the survivor's stream hears the end",
      async () => survivorStream.about(preview.id).length > heardBeforeKill,
      {
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );
    expect(survivorStream.ended()).toBe(false);

    // nothing lost: the rest is pruned by a new preview through the proxy (the dead replica is skipped)
    const again = await as(developer, base, `/api/apps/${app()}/prune-previews`, { method: 'POST' });
    expect(again.status, again.text).toBe(200);
    const rest = (again.body as { preview: Preview }).preview;
    expect(rest.candidates.map((c) => c.ref.name).sort()).toEqual([...liveNow].sort());
    for (const i of [0, 1]) {
      const r = await as(reviewers[i] as Signed, base, `/api/prune-previews/${rest.id}/approve`, {
        method: 'POST',
        body: { comment: 'the rest', confirmation: rest.confirmation },
      });
      expect(r.status, r.text).toBe(200);
    }
    await waitFor(
      'the rest pruned',
      async () =>
        ((await direct(survivor, `/api/prune-previews/${rest.id}`)).body as { preview: Preview }).preview.status ===
        'done',
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    expect(liveProbes().size).toBe(0);

    // nothing done twice: one delete intent per object over both previews (the one in flight at the kill at most
    // once more), one outcome per preview
    const ev = async (type: string) =>
      ((await direct(survivor, `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] }).events;
    const ids = new Set([preview.id, rest.id]);
    const intents = (await ev('prune.delete')).filter((e) => ids.has(String(e.data.previewId)));
    const perObject = new Map<string, number>();
    for (const e of intents) perObject.set(String(e.data.object), (perObject.get(String(e.data.object)) ?? 0) + 1);
    expect(perObject.size).toBe(N);
    expect([...perObject.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(1);
    const executed = (await ev('prune.executed')).filter((e) => ids.has(String(e.data.previewId)));
    expect(executed.map((e) => `${String(e.data.previewId)} ${String(e.data.status)}`).sort()).toEqual(
      [`${preview.id} failed`, `${rest.id} done`].sort(),
    );
    // the survivor hears the others: LISTEN is up and notifications arrived
    const metrics = await (await fetch(`${(replicas[survivor] as Bff).base}/metrics`)).text();
    expect(metrics).toMatch(/^gitops_console_state_bus_listening 1$/m);
    expect(
      Number(/^gitops_console_state_bus_notifications_total\{event="received"\} (\d+)$/m.exec(metrics)?.[1]),
    ).toBeGreaterThan(0);
    s1.close();
    s2.close();
  });

  it('a sign-out through one replica ends the session on every replica (the restarted one too)', async () => {
    // the replica killed above comes back on the same database
    const running = await Promise.all(
      replicas.slice(0, 2).map(async (r, i) =>
        r.child.exitCode === null && r.child.signalCode === null
          ? r
          : await spawnBff(`replica-${i}-again`, {
              accounts: { users: USERS },
              env: { DATABASE_URL: (pgServer as PgServer).url, CONSOLE_RELEASE_RECORDER: 'off' },
            }),
      ),
    );
    for (const r of running) if (!replicas.includes(r)) replicas.push(r);
    const [one, other] = running as [Bff, Bff];
    const dev = await signIn(one.base, 'prod-developer');
    for (const r of running) expect((await as(dev, r.base, '/api/auth/session')).status).toBe(200);
    const stream = await openStream(other.base, dev);
    const out = await as(dev, one.base, '/api/auth/signout', { method: 'POST' });
    expect(out.status, out.text).toBeLessThan(300);
    for (const r of running) expect((await as(dev, r.base, '/api/auth/session')).status).toBe(401);
    // the other replica's stream of that session ends too
    await waitFor('the stream on the other replica ends', async () => stream.ended(), {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
  });
});
