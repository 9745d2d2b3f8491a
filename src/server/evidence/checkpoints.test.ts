// Signed checkpoints: the key file (0600, outside the database), signing and checking, the periodic writer,
// and the store's verify() catching a store rewritten consistently (events, hashes and head).
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { EvidenceInput } from '../../domain/evidence.ts';
import { SqliteEvidenceStore } from './sqlite-store.ts';
import { checkpointIntervalMs, EvidenceCheckpoints } from './checkpoints.ts';
import { checkpointSignatureOk, loadSigningKey, signCheckpoint, signingKeyPath } from './signing.ts';

const dir = mkdtempSync(join(tmpdir(), 'evidence-cp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ev = (i: number, note = 'x'): EvidenceInput => ({
  time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  type: 'app.revision-observed',
  actor: 'c',
  app: 'a',
  cluster: 'nonprod',
  env: 'dev',
  data: { i, note },
});

describe('signing key', () => {
  it('is created once as an owner-only Ed25519 key file in the data dir, or where the env names', () => {
    expect(signingKeyPath('/data')).toBe('/data/checkpoint.key');
    expect(signingKeyPath('/data', { CONSOLE_EVIDENCE_SIGNING_KEY_FILE: '/secrets/k.pem' })).toBe('/secrets/k.pem');
    const path = join(dir, 'keys', 'checkpoint.key');
    const k = loadSigningKey(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(k.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(loadSigningKey(path).publicKeyPem).toBe(k.publicKeyPem);
    const bad = join(dir, 'rsa.key');
    writeFileSync(bad, 'not a key');
    expect(() => loadSigningKey(bad)).toThrow();
  });

  it('signs seq, hash and time; any change of them or another key fails the check', () => {
    const k = loadSigningKey(join(dir, 'k2.key'));
    const c = signCheckpoint({ seq: 7, hash: 'ab'.repeat(32) }, '2026-01-01T00:00:00.000Z', k.privateKey);
    expect(checkpointSignatureOk(c, k.publicKeyPem)).toBe(true);
    expect(checkpointSignatureOk({ ...c, seq: 8 }, k.publicKeyPem)).toBe(false);
    expect(checkpointSignatureOk({ ...c, hash: 'cd'.repeat(32) }, k.publicKey)).toBe(false);
    expect(checkpointSignatureOk({ ...c, time: '2026-01-01T00:00:01.000Z' }, k.publicKey)).toBe(false);
    expect(checkpointSignatureOk(c, loadSigningKey(join(dir, 'k3.key')).publicKey)).toBe(false);
    expect(checkpointSignatureOk({ ...c, signature: 'garbage' }, k.publicKey)).toBe(false);
  });

  it('interval from CONSOLE_CHECKPOINT_INTERVAL_S, 300 s by default', () => {
    expect(checkpointIntervalMs({})).toBe(300_000);
    expect(checkpointIntervalMs({ CONSOLE_CHECKPOINT_INTERVAL_S: '5' })).toBe(5000);
    expect(checkpointIntervalMs({ CONSOLE_CHECKPOINT_INTERVAL_S: 'soon' })).toBe(300_000);
  });
});

describe('EvidenceCheckpoints and verify()', () => {
  it('signs the head at start, on the interval when it moved, and at stop', async () => {
    vi.useFakeTimers();
    try {
      const store = SqliteEvidenceStore.open(dir, 'cp1.sqlite');
      const key = loadSigningKey(join(dir, 'cp1.key'));
      const cps = new EvidenceCheckpoints(store, key, { intervalMs: 60_000 });
      await store.append(ev(1));
      cps.start();
      await vi.advanceTimersByTimeAsync(10);
      expect((await store.checkpoints()).map((c) => c.seq)).toEqual([1]);
      await vi.advanceTimersByTimeAsync(60_000); // head unchanged: nothing new
      expect(await store.checkpoints()).toHaveLength(1);
      await store.append(ev(2));
      await store.append(ev(3));
      await vi.advanceTimersByTimeAsync(60_000);
      await store.append(ev(4));
      await cps.stop();
      const all = await store.checkpoints();
      expect(all.map((c) => c.seq)).toEqual([1, 3, 4]);
      expect(all.every((c) => checkpointSignatureOk(c, key.publicKey))).toBe(true);
      expect(await store.verify({ publicKey: key.publicKeyPem })).toEqual({
        ok: true,
        count: 4,
        head: (await store.list({ limit: 1 }))[0]?.hash,
        checkpoints: 3,
      });
      // the checkpoints table is append-only too
      expect(() => store.db.exec('DELETE FROM evidence_checkpoints')).toThrow(/append-only/);
      await store.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a store rewritten consistently (one event changed, every hash after it recomputed) fails at the first checkpoint after it', async () => {
    const key = loadSigningKey(join(dir, 'cp2.key'));
    const original = SqliteEvidenceStore.open(dir, 'orig.sqlite');
    const cps = new EvidenceCheckpoints(original, key);
    for (let i = 1; i <= 10; i++) {
      await original.append(ev(i));
      if (i % 3 === 0) await cps.checkpoint();
    }
    const forged = SqliteEvidenceStore.open(dir, 'forged.sqlite');
    for (let i = 1; i <= 10; i++) await forged.append(ev(i, i === 5 ? 'forged' : 'x'));
    for (const c of await original.checkpoints()) await forged.addCheckpoint(c);
    expect(await forged.verify()).toMatchObject({ ok: false, brokenAt: 6 }); // without the key: the hashes differ
    const r = await forged.verify({ publicKey: key.publicKeyPem });
    expect(r).toEqual({
      ok: false,
      count: 10,
      brokenAt: 6,
      reason: expect.stringContaining('event 6 no longer has the hash signed in the checkpoint'),
      checkpoint: { seq: 6, time: expect.any(String) },
    });
    // checkpoints re-signed with another key (the forger's) are refused with the console's public key
    const other = loadSigningKey(join(dir, 'forger.key'));
    const forged2 = SqliteEvidenceStore.open(dir, 'forged2.sqlite');
    for (let i = 1; i <= 10; i++) await forged2.append(ev(i, i === 5 ? 'forged' : 'x'));
    await new EvidenceCheckpoints(forged2, other).checkpoint();
    expect((await forged2.verify({ publicKey: key.publicKeyPem })).ok).toBe(false);
    expect(await original.verify({ publicKey: key.publicKeyPem })).toMatchObject({ ok: true, checkpoints: 3 });
    await Promise.all([original.close(), forged.close(), forged2.close()]);
  });
});
