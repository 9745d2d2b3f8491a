import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EvidenceEvent, EvidenceInput, VerifyResult } from '../../domain/evidence.ts';
import { Accounts } from './accounts.ts';
import { SessionStore } from './sessions.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { link, type EvidenceStore } from '../evidence/store.ts';
import { AuthActions } from './actions.ts';

/** An evidence store in memory that refuses every append while `down` is set. */
class FlakyStore implements EvidenceStore {
  readonly kind = 'sqlite' as const;
  readonly events: EvidenceEvent[] = [];
  down = false;
  async append(e: EvidenceInput): Promise<EvidenceEvent> {
    if (this.down) throw new Error('SQLITE_IOERR_WRITE: disk I/O error');
    const ev = link(this.events.at(-1), e);
    this.events.push(ev);
    return ev;
  }
  async list(): Promise<EvidenceEvent[]> {
    return [...this.events].reverse();
  }
  async latestDataByApp(): Promise<Map<string, string>> {
    return new Map();
  }
  async verify(): Promise<VerifyResult> {
    return { ok: true, count: this.events.length, head: this.events.at(-1)?.hash ?? '' };
  }
  async close(): Promise<void> {}
}

const PASSWORD = 'correct horse battery';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'auth-actions-'));
  dirs.push(dir);
  const file = join(dir, 'auth.json');
  // a cheap scrypt cost: these tests are about evidence, not hashing (auth.test.ts hashes at the real cost)
  const accounts = await Accounts.open(file, () => undefined, { passwordCost: { N: 1024, r: 8, p: 1 } });
  await accounts.addUser('alice', PASSWORD, [{ role: 'developer', clusters: ['*'], envs: ['*'] }], false);
  const sessions = new SessionStore(60_000, 3_600_000);
  const create = vi.spyOn(sessions, 'create');
  const store = new FlakyStore();
  const recorder = new EvidenceRecorder(store, { warn: vi.fn(), error: vi.fn() }, { retryBaseMs: 60_000 });
  const auth = new AuthActions({ accounts, sessions, recorder });
  return { file, accounts, sessions, create, store, recorder, auth };
}

describe('auth actions: evidence fails closed', () => {
  it('a sign-in records auth.signed-in before the session exists, then its outcome', async () => {
    const { auth, store, create, sessions, accounts } = await setup();
    create.mockImplementation((user, now) => {
      // the intent is already in the chain when the session is made
      expect(store.events.map((e) => e.type)).toEqual(['auth.signed-in']);
      create.mockRestore();
      return sessions.create(user, now);
    });
    const started = await auth.signIn('alice', PASSWORD, '10.0.0.7');
    expect(sessions.get(started.id)?.user.name).toBe('alice');
    expect(store.events.map((e) => [e.type, e.actor])).toEqual([
      ['auth.signed-in', 'alice'],
      ['action.completed', 'alice'],
    ]);
    // who: the console's own issuer and the account's stable id, and the person (the account, no email set)
    const id = accounts.user('alice')?.id ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(store.events[0]?.data).toEqual({
      method: 'local',
      address: '10.0.0.7',
      issuer: 'console:local',
      subject: id,
      person: `console:local#${id}`,
    });
    expect(sessions.get(started.id)?.user).toMatchObject({ issuer: 'console:local', subject: id });
  });

  it('store down: the right password gets 503 EvidenceUnavailable and no session is created', async () => {
    const { auth, store, create, recorder } = await setup();
    store.down = true;
    await expect(auth.signIn('alice', PASSWORD, '10.0.0.7')).rejects.toMatchObject({
      status: 503,
      code: 'EvidenceUnavailable',
    });
    expect(create).not.toHaveBeenCalled();
    expect(recorder.status()).toMatchObject({ refused: 1, pending: 0 });
  });

  it('store down: wrong passwords still get 401 and then 429 (brute force stays throttled); the failures are queued, then written', async () => {
    const { auth, store, recorder } = await setup();
    store.down = true;
    for (let i = 0; i < 5; i++)
      await expect(auth.signIn('alice', 'wrong password', '10.0.0.7')).rejects.toMatchObject({ status: 401 });
    await expect(auth.signIn('alice', PASSWORD, '10.0.0.7')).rejects.toMatchObject({
      status: 429,
      retryAfterSeconds: expect.any(Number),
    });
    // nobody's name is written for a name that is not an account (it may be a password typed in the wrong box)
    await expect(auth.signIn('hunter2-typed-here', 'x', '10.0.0.8')).rejects.toMatchObject({ status: 401 });
    expect(recorder.status()).toMatchObject({ pending: 6, failing: true });
    expect(store.events).toEqual([]);
    store.down = false;
    recorder.retryNow();
    await vi.waitFor(() => expect(recorder.status().pending).toBe(0));
    expect(store.events.map((e) => [e.type, e.actor])).toEqual([
      ...Array(5).fill(['auth.failed', 'alice']),
      ['auth.failed', 'unknown user'],
    ]);
  });

  it('store down: a password change is refused with 503 and the old password stays (file and memory)', async () => {
    const { auth, store, sessions, accounts, file } = await setup();
    const { id, session } = sessions.create({ name: 'alice', source: 'local', groups: [], grants: [] });
    const before = readFileSync(file, 'utf8');
    store.down = true;
    await expect(auth.changePassword(session, PASSWORD, 'a brand new passphrase')).rejects.toMatchObject({
      status: 503,
      code: 'EvidenceUnavailable',
    });
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(await accounts.check('alice', PASSWORD)).toBeDefined();
    expect(await accounts.check('alice', 'a brand new passphrase')).toBeUndefined();
    // the session was not ended either
    expect(sessions.get(id)?.user.name).toBe('alice');
    store.down = false;
    const started = await auth.changePassword(session, PASSWORD, 'a brand new passphrase');
    expect(await accounts.check('alice', 'a brand new passphrase')).toBeDefined();
    expect(sessions.get(started.id)?.user.name).toBe('alice');
    expect(store.events.map((e) => e.type)).toEqual(['auth.password-changed', 'action.completed']);
  });

  it('store down: sign-out still ends the session; its record waits in the queue', async () => {
    const { auth, store, sessions, recorder } = await setup();
    const { id, session } = sessions.create({ name: 'alice', source: 'local', groups: [], grants: [] });
    store.down = true;
    await auth.signOut(session);
    expect(sessions.get(id)).toBeUndefined();
    expect(recorder.status().pending).toBe(1);
    store.down = false;
    recorder.retryNow();
    await vi.waitFor(() => expect(store.events.map((e) => e.type)).toEqual(['auth.signed-out']));
  });
});
