// The sign-in throttles count across replicas (issue 40): two consoles on one database see the same attempts.
// SQLite here; PostgreSQL in test/integration/replicas.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { all, dialectOf, type Dialect, type Step } from '../store/dialect.ts';
import { Accounts } from './accounts.ts';
import { AuthActions } from './actions.ts';
import { dbCounters } from './attempt-store.ts';
import { SessionStore } from './sessions.ts';

const PASSWORD = 'correct horse battery';
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function twoReplicas() {
  const dir = mkdtempSync(join(tmpdir(), 'attempts-'));
  const store = await SqliteEvidenceStore.open(dir);
  cleanup.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const accounts = await Accounts.open(join(dir, 'auth.json'), () => undefined, {
    passwordCost: { N: 1024, r: 8, p: 1 },
  });
  await accounts.addUser('alice', PASSWORD, [{ role: 'developer', clusters: ['*'], envs: ['*'] }], false);
  const recorder = new EvidenceRecorder(store, { warn: vi.fn(), error: vi.fn() });
  const replica = () =>
    new AuthActions({
      accounts,
      sessions: new SessionStore(60_000, 3_600_000),
      recorder,
      attempts: dbCounters(dialectOf(store)),
    });
  return { a: replica(), b: replica(), store };
}

const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { status?: number }) => e.status ?? 0,
  );

describe('sign-in throttles in the database', () => {
  it('five wrong passwords spread over two replicas lock the sixth try on either, and the right password too', async () => {
    const { a, b } = await twoReplicas();
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) seen.push(await status((i % 2 ? b : a).signIn('alice', 'wrong', '10.0.0.7')));
    expect(seen).toEqual([401, 401, 401, 401, 401]);
    // on a counter per process each replica had seen two or three: both would still answer 401/200
    expect(await status(b.signIn('alice', 'wrong', '10.0.0.7'))).toBe(429);
    expect(await status(a.signIn('alice', PASSWORD, '10.0.0.7'))).toBe(429);
    // another address is not locked out by this one
    expect(await status(b.signIn('alice', PASSWORD, '10.0.0.8'))).toBe(200);
  });

  it('twenty sign-in requests a minute from one address, counted on every replica', async () => {
    const { a, b } = await twoReplicas();
    for (let i = 0; i < 20; i++) await (i % 2 ? b : a).admitSignIn('192.0.2.1');
    await expect(a.admitSignIn('192.0.2.1')).rejects.toMatchObject({ status: 429 });
    await expect(b.admitSignIn('192.0.2.1')).rejects.toMatchObject({ status: 429 });
  });

  it('a window that ended starts again at one; the store keeps hashes of the keys, never a typed name', async () => {
    const { store } = await twoReplicas();
    const db = dialectOf(store);
    const c = dbCounters(db)('failures', 2, 60_000);
    const t = 1_000_000;
    expect(await c.take('hunter2-typed-as-a-name|10.0.0.1', t)).toBeUndefined();
    expect(await c.take('hunter2-typed-as-a-name|10.0.0.1', t)).toBeUndefined();
    expect(await c.take('hunter2-typed-as-a-name|10.0.0.1', t + 1000)).toBe(59);
    expect(await c.peek('hunter2-typed-as-a-name|10.0.0.1', t + 1000)).toBe(59);
    expect(await c.take('hunter2-typed-as-a-name|10.0.0.1', t + 60_000)).toBeUndefined();
    const rows = (await db.exec(all('SELECT key, count FROM auth_attempts'))) as Array<{ key: string; count: number }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]?.count).toBe(1);
  });

  it('when the database cannot count, the replica still does (never no limit), and says so once', async () => {
    const { store } = await twoReplicas();
    const real = dialectOf(store);
    let down = false;
    const flaky: Dialect = {
      ...real,
      exec: (s: Step) => (down ? Promise.reject(new Error('connection refused')) : real.exec(s)),
    };
    const onError = vi.fn();
    const c = dbCounters(flaky, onError)('sign-in', 3, 60_000);
    down = true;
    const waits = [];
    for (let i = 0; i < 5; i++) waits.push(await c.take('192.0.2.9', 5_000));
    expect(waits).toEqual([undefined, undefined, undefined, 60, 60]);
    expect(await c.peek('192.0.2.9', 5_000)).toBe(60);
    expect(onError).toHaveBeenCalledTimes(1);
  });
});
