// The claim of an end, on a fake clock and a real store: when a replica calls an end dead (only a claim unchanged
// for a whole claim time as it watched it, and past its expiry — a clock far ahead does not make a renewed claim
// dead; a replica that just started waits a claim time), and the fencing (once another process took the end
// over, the old holder can renew nothing and write nothing, and learns who took it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appOf, FakeFlux, oncall, replicaOf } from '../../../test/support/freeze-fakes.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { ClaimLostError, claimIsDead, claimTiming, claimTimingFromEnv, EndClaim, UNCLAIMED_STALE_MS } from './claim.ts';
import type { FreezeRow } from './store.ts';
import type { FreezeContext } from './types.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-claim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function watcher(ttlMs = 30_000) {
  const clock = { now: T0 };
  const ctx = { now: () => clock.now, timing: claimTiming(ttlMs), watched: new Map() } as unknown as FreezeContext;
  return { clock, ctx };
}

const ending = (over: Partial<FreezeRow>): FreezeRow =>
  ({
    id: 'frz-1',
    status: 'ending',
    version: 3,
    updatedAt: iso(T0),
    claimedBy: 'replica-a',
    claimToken: 'token-a',
    claimedUntil: iso(T0 + 30_000),
    doc: { targets: [], extensions: [], startedAt: iso(T0) },
    ...over,
  }) as FreezeRow;

describe('when an end is dead', () => {
  it('a claim renewed between looks is alive, however far ahead the watcher’s clock runs', () => {
    const { clock, ctx } = watcher();
    for (let i = 0; i < 20; i++) {
      // each look: 100 s later on this clock; the holder renewed its claim meanwhile (its own clock)
      clock.now = T0 + i * 100_000;
      expect(claimIsDead(ctx, ending({ claimedUntil: iso(T0 + 30_000 + i * 5_000) }))).toBe(false);
    }
  });

  it('a claim unchanged for a claim time and past its expiry is dead; not a moment before either', () => {
    const { clock, ctx } = watcher();
    const row = ending({ claimedUntil: iso(T0 + 40_000) });
    expect(claimIsDead(ctx, row)).toBe(false); // first sight
    clock.now = T0 + 29_999;
    expect(claimIsDead(ctx, row)).toBe(false); // not a claim time yet
    clock.now = T0 + 39_999;
    expect(claimIsDead(ctx, row)).toBe(false); // unchanged long enough, but not expired
    clock.now = T0 + 40_000;
    expect(claimIsDead(ctx, row)).toBe(true);
  });

  it('a replica that just started waits a claim time, even for a claim that expired long ago', () => {
    const { clock, ctx } = watcher();
    clock.now = T0 + 3_600_000;
    const row = ending({});
    expect(claimIsDead(ctx, row)).toBe(false);
    clock.now += 29_999;
    expect(claimIsDead(ctx, row)).toBe(false);
    clock.now += 1;
    expect(claimIsDead(ctx, row)).toBe(true);
  });

  it('any write of the row starts the watch again', () => {
    const { clock, ctx } = watcher();
    expect(claimIsDead(ctx, ending({}))).toBe(false);
    clock.now = T0 + 60_000;
    expect(claimIsDead(ctx, ending({ version: 4 }))).toBe(false);
    clock.now = T0 + 90_000;
    expect(claimIsDead(ctx, ending({ version: 4 }))).toBe(true);
  });

  it('an end without a claim (left by an older console) is dead once idle as long as before', () => {
    const { clock, ctx } = watcher();
    const row = ending({ claimedBy: null, claimToken: null, claimedUntil: null, updatedAt: iso(T0) });
    expect(claimIsDead(ctx, row)).toBe(false);
    clock.now = T0 + UNCLAIMED_STALE_MS - 1;
    expect(claimIsDead(ctx, row)).toBe(false);
    clock.now = T0 + UNCLAIMED_STALE_MS;
    expect(claimIsDead(ctx, row)).toBe(true);
  });

  it('CONSOLE_FREEZE_CLAIM_SECONDS sets the claim time (renewed six times in it); nonsense keeps 30 s', () => {
    expect(claimTimingFromEnv({})).toEqual({ ttlMs: 30_000, renewMs: 5_000, watchMs: 5_000 });
    expect(claimTimingFromEnv({ CONSOLE_FREEZE_CLAIM_SECONDS: '3' })).toEqual({
      ttlMs: 3_000,
      renewMs: 500,
      watchMs: 500,
    });
    for (const bad of ['0', '1', '-5', 'abc', '1.5', '601'])
      expect(claimTimingFromEnv({ CONSOLE_FREEZE_CLAIM_SECONDS: bad }).ttlMs, bad).toBe(30_000);
  });
});

describe('fencing', () => {
  it('once another process took the end over, the old holder renews nothing, writes nothing, and learns who', async () => {
    const ev = SqliteEvidenceStore.open(dir, 'fence.sqlite');
    const flux = new FakeFlux();
    flux.add('a');
    const app = appOf('a');
    const { service, store } = replicaOf({ name: 'replica-a', ev, flux, apps: [app] });
    const f = await service.create(oncall, { cluster: 'c', app: app.id, reason: 'incident', minutes: 60 });
    const ctx = (service as unknown as { ctx: FreezeContext }).ctx;
    const mine = new EndClaim(ctx, f.id);
    const row = (await store.get(f.id)) as FreezeRow;
    expect(await store.claimEnd(f.id, 'active', row, mine.fresh())).toBe(true);
    expect(await mine.renew()).toBe(true);
    await mine.modify((r) => ({ doc: { ...r.doc, decisions: [] } }));
    // a second claim on the same row as read before: refused (the row changed)
    expect(await store.claimEnd(f.id, 'active', row, { by: 'x', token: 'x', until: iso(Date.now()) })).toBe(false);
    // another process takes it over (compare-and-set on the claim it saw)
    const seen = (await store.get(f.id)) as FreezeRow;
    expect(
      await store.claimEnd(f.id, 'ending', seen, { by: 'replica-b', token: 'token-b', until: iso(Date.now()) }),
    ).toBe(true);
    expect(await mine.renew()).toBe(false);
    expect(mine.lost).toBe(true);
    const err = await mine.modify((r) => ({ doc: r.doc })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClaimLostError);
    expect((err as ClaimLostError).takenBy).toBe('replica-b');
    await expect(mine.transition('ended', { by: 'oncall', reason: 'x' })).rejects.toBeInstanceOf(ClaimLostError);
    await expect(mine.confirm()).rejects.toBeInstanceOf(ClaimLostError);
    // nothing of the old holder landed: the row is the taker's
    const now = (await store.get(f.id)) as FreezeRow;
    expect(now).toMatchObject({ status: 'ending', claimedBy: 'replica-b', claimToken: 'token-b' });
    expect(now.version).toBe(seen.version + 1);
    mine.stop();
    await service.settled();
    await ev.close();
  });
});
