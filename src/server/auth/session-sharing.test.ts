// Two replicas' session stores on one database (SQLite here; PostgreSQL in test/integration/replicas.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { LocalStateBus, type StateBus, type StateEvent } from '../store/state-bus.ts';
import { DbSessionBackend, type SessionBackend } from './session-backend.ts';
import { SessionStore } from './sessions.ts';

const local = (name: string) => ({
  name,
  source: 'local' as const,
  issuer: 'console:local',
  subject: `id-${name}`,
  person: `console:local#id-${name}`,
  groups: [],
  grants: [],
});
const alice = local('alice');
const bob = local('bob');
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** two buses joined like two replicas on one PostgreSQL: each hears the other's changes */
function joinedBuses(): [StateBus, StateBus] {
  const a = new LocalStateBus(0);
  const b = new LocalStateBus(0);
  const relay = (from: StateBus, to: LocalStateBus) =>
    from.on((e: StateEvent) => {
      if (e.origin === from.replica)
        (to as unknown as { emitter: { emit(n: string, e: StateEvent): void } }).emitter.emit('change', e);
    });
  relay(a, b);
  relay(b, a);
  return [a, b];
}

async function replicas() {
  const dir = mkdtempSync(join(tmpdir(), 'sessions-'));
  const store = await SqliteEvidenceStore.open(dir);
  cleanup.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const [busA, busB] = joinedBuses();
  const a = new SessionStore(60_000, 3_600_000);
  const b = new SessionStore(60_000, 3_600_000);
  cleanup.push(a.share({ backend: new DbSessionBackend(store), bus: busA }));
  cleanup.push(b.share({ backend: new DbSessionBackend(store), bus: busB }));
  return { a, b, store, dir };
}

describe('sessions shared in the database', () => {
  it('a session started on one replica is found on the other, with its user and CSRF token; the cookie is never stored', async () => {
    const { a, b } = await replicas();
    const { id, session } = await a.start(alice);
    const found = await b.find(id);
    expect(found?.user.name).toBe('alice');
    expect(found?.csrf).toBe(session.csrf);
    expect(await b.find('not-a-session')).toBeUndefined();
    expect(b.get(id)?.key).toBe(session.key); // now in b's memory too
  });

  it('a sign-out on one replica ends it on the other (its streams too), also after the restart of either', async () => {
    const { a, b, store } = await replicas();
    const { id, session } = await a.start(alice);
    expect((await b.find(id))?.user.name).toBe('alice');
    const endedOnB: string[] = [];
    b.on('revoked', (k) => endedOnB.push(k));
    a.revokeKey(session.key);
    await new Promise((r) => setTimeout(r, 20));
    expect(endedOnB).toEqual([session.key]);
    expect(await b.find(id)).toBeUndefined();
    // a third process on the same database (a restart) does not find it either
    const c = new SessionStore(60_000, 3_600_000);
    cleanup.push(c.share({ backend: new DbSessionBackend(store) }));
    expect(await c.find(id)).toBeUndefined();
  });

  it('several replicas (each request reads its row): a sign-out that returned holds on the other before any notification', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sessions-'));
    const store = await SqliteEvidenceStore.open(dir);
    cleanup.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    // two buses that never relay: the sign-out's notification is late (or lost)
    const a = new SessionStore(60_000, 3_600_000);
    const b = new SessionStore(60_000, 3_600_000);
    const warned: string[] = [];
    const log = { warn: (_o: object, m: string) => warned.push(m) };
    cleanup.push(a.share({ backend: new DbSessionBackend(store), bus: new LocalStateBus(0), recheckMs: 0 }));
    cleanup.push(b.share({ backend: new DbSessionBackend(store), bus: new LocalStateBus(0), recheckMs: 0, log }));
    const { id, session } = await a.start(alice);
    expect((await b.find(id))?.user.name).toBe('alice');
    await a.end(session.key);
    expect(await b.find(id)).toBeUndefined();
    // the default (one process) trusts its copy for 30 s: the same late notification leaves it alive there
    const c = new SessionStore(60_000, 3_600_000);
    const d = new SessionStore(60_000, 3_600_000);
    cleanup.push(c.share({ backend: new DbSessionBackend(store), bus: new LocalStateBus(0) }));
    cleanup.push(d.share({ backend: new DbSessionBackend(store), bus: new LocalStateBus(0) }));
    const other = await c.start(bob);
    expect((await d.find(other.id))?.user.name).toBe('bob');
    await c.end(other.session.key);
    expect((await d.find(other.id))?.user.name).toBe('bob');
    // a store that stops answering: b serves its copy of a live session, and says so once, not per request
    const live = await a.start(alice);
    expect((await b.find(live.id))?.user.name).toBe('alice');
    await store.close();
    for (let i = 0; i < 5; i++) expect((await b.find(live.id))?.user.name).toBe('alice');
    expect(warned.filter((m) => /did not answer/.test(m))).toHaveLength(1);
  });

  it("a restarted replica finds the sessions it had; a password change ends the user's sessions everywhere", async () => {
    const { a, b, store } = await replicas();
    const s1 = await a.start(alice);
    const s2 = await b.start(alice);
    const other = await a.start(bob);
    const restarted = new SessionStore(60_000, 3_600_000);
    cleanup.push(restarted.share({ backend: new DbSessionBackend(store) }));
    expect((await restarted.find(s1.id))?.user.name).toBe('alice');
    await b.revokeUserEverywhere('local', 'alice');
    await new Promise((r) => setTimeout(r, 20));
    expect(await a.find(s1.id)).toBeUndefined();
    expect(await a.find(s2.id)).toBeUndefined();
    expect((await a.find(other.id))?.user.name).toBe('bob');
  });

  it('a session stored by an older version (no issuer, subject or person) is not served: sign in again', async () => {
    const { a, store } = await replicas();
    const { id } = await a.start({ name: 'alice', source: 'oidc', groups: [], grants: [] });
    const restarted = new SessionStore(60_000, 3_600_000);
    cleanup.push(restarted.share({ backend: new DbSessionBackend(store) }));
    expect(await restarted.find(id)).toBeUndefined();
    const current = await a.start(alice);
    expect((await restarted.find(current.id))?.user).toMatchObject({ subject: 'id-alice', person: alice.person });
  });

  it('idle on this replica but used on another: the database decides', async () => {
    const { a, b } = await replicas();
    const t0 = Date.now();
    const { id, session } = await a.start(alice, t0);
    expect(await b.find(id, t0 + 1000)).toBeDefined();
    // used through b for a while (b writes lastSeen at most once a minute)
    for (let t = t0 + 30_000; t <= t0 + 100_000; t += 30_000) expect(await b.find(id, t)).toBeDefined();
    // a has not seen it for 110 s (> idle 60 s): it reads the database again instead of ending it
    expect((await a.find(id, t0 + 110_000))?.key).toBe(session.key);
    // nobody for more than the idle time: ended
    expect(await a.find(id, t0 + 300_000)).toBeUndefined();
    expect(await b.find(id, t0 + 300_001)).toBeUndefined();
  });

  it('a database that cannot answer is an error, never "signed out"', async () => {
    const { a, store } = await replicas();
    const { id } = await a.start(alice);
    const fresh = new SessionStore(60_000, 3_600_000);
    cleanup.push(fresh.share({ backend: new DbSessionBackend(store) }));
    await store.close();
    await expect(fresh.find(id)).rejects.toThrow();
    await expect(fresh.start(bob)).rejects.toThrow();
    expect(fresh.size).toBe(0);
  });
});

describe('sessions while the store is down', () => {
  it('a replica serves the sessions it holds; a sign-out ends it here at once and removes the row once the store is back', async () => {
    const { store } = await replicas();
    const real = new DbSessionBackend(store);
    let down = false;
    const gate =
      <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
      (...a: A) =>
        down ? Promise.reject(new Error('store down')) : f(...a);
    const flaky: SessionBackend = {
      load: gate(real.load.bind(real)),
      save: gate(real.save.bind(real)),
      touch: gate(real.touch.bind(real)),
      remove: gate(real.remove.bind(real)),
      removeUser: gate(real.removeUser.bind(real)),
      sweep: gate(real.sweep.bind(real)),
    };
    const a = new SessionStore(60_000, 3_600_000);
    cleanup.push(a.share({ backend: flaky }));
    const t0 = Date.now();
    const held = await a.start(alice, t0);
    const ended = await a.start(bob, t0);
    down = true;
    // 40 s later (past the 30 s re-read): the store does not answer, this replica's copy serves
    expect((await a.find(held.id, t0 + 40_000))?.user.name).toBe('alice');
    await a.end(ended.session.key);
    expect(await a.find(ended.id, t0 + 40_000)).toBeUndefined();
    // a session this replica never held cannot be checked: an error (503), not "signed out"
    const other = new SessionStore(60_000, 3_600_000);
    cleanup.push(other.share({ backend: flaky }));
    await expect(other.find(held.id)).rejects.toThrow(/store down/);
    down = false;
    await new Promise((r) => setTimeout(r, 1500));
    expect(await real.load(ended.session.key)).toBeUndefined();
    expect((await real.load(held.session.key))?.user.name).toBe('alice');
  });
});

describe('the local state bus', () => {
  it('coalesces a burst per record: the first at once, one trailing with the last state', async () => {
    const bus = new LocalStateBus(50);
    const heard: string[] = [];
    bus.on((e) => heard.push(e.change.kind === 'prune' ? `${e.change.id}` : e.change.kind));
    for (let i = 0; i < 20; i++) bus.publish({ kind: 'prune', id: 'p1' });
    bus.publish({ kind: 'prune', id: 'p2' });
    expect(heard).toEqual(['p1', 'p2']);
    await new Promise((r) => setTimeout(r, 80));
    expect(heard).toEqual(['p1', 'p2', 'p1']);
    await new Promise((r) => setTimeout(r, 80));
    expect(heard).toEqual(['p1', 'p2', 'p1']);
    await bus.close();
  });
});
