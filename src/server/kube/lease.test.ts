// The Lease elector against an in-memory apiserver that honours resourceVersion preconditions (409 on a stale
// write): one leader at a time, renewals, a takeover only after expiry, a lost race, a leader that cannot renew
// stops before the lease could be taken, and a stop that hands the lease over at once.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LeaseElector, type LeaseConn } from './lease.ts';

class FakeApi implements LeaseConn {
  obj: Record<string, unknown> | undefined;
  rv = 0;
  down = false;
  async json<T>(method: string, _path: string, opts: { body?: string } = {}): Promise<T> {
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED'), { status: 0 });
    const err = (status: number) => Object.assign(new Error(`HTTP ${status}`), { status });
    if (method === 'GET') {
      if (!this.obj) throw err(404);
      return structuredClone(this.obj) as T;
    }
    const body = JSON.parse(opts.body ?? '{}') as { metadata: { resourceVersion?: string } };
    if (method === 'POST') {
      if (this.obj) throw err(409);
    } else if (body.metadata.resourceVersion !== String(this.rv)) throw err(409);
    this.obj = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.obj) as T;
  }
}

function elector(api: FakeApi, identity: string, clock: { t: number }, events: string[]) {
  return new LeaseElector({
    conn: api,
    namespace: 'ns',
    name: 'rec',
    identity,
    durationS: 15,
    now: () => clock.t,
    onStart: () => events.push(`${identity} start`),
    onStop: (why) => events.push(`${identity} stop: ${why}`),
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LeaseElector', () => {
  it('one leader; the other follows; takeover only after the lease expired', async () => {
    const api = new FakeApi();
    const clock = { t: Date.parse('2026-12-01T10:00:00Z') };
    const ev: string[] = [];
    const a = elector(api, 'a', clock, ev);
    const b = elector(api, 'b', clock, ev);
    expect(await a.tryOnce()).toBe(true);
    expect(await b.tryOnce()).toBe(false);
    clock.t += 5000;
    expect(await a.tryOnce()).toBe(true); // renewed
    clock.t += 14_000;
    expect(await b.tryOnce()).toBe(false); // b sees a new resourceVersion: the holder is alive
    clock.t += 14_000;
    expect(await b.tryOnce()).toBe(false); // unchanged for 14 s of b's own clock: not expired yet
    clock.t += 2000;
    expect(await b.tryOnce()).toBe(true); // unchanged for 16 s: expired, taken over
    expect((api.obj?.spec as { leaseTransitions: number }).leaseTransitions).toBe(1);
    expect(await a.tryOnce()).toBe(false);
    expect(ev).toEqual(['a start', 'b start', 'a stop: held by b']);
    expect([a.isLeader, b.isLeader]).toEqual([false, true]);
  });

  it('a lost race (stale resourceVersion → 409) leaves exactly one leader', async () => {
    const api = new FakeApi();
    const clock = { t: 1_000_000 };
    const ev: string[] = [];
    const a = elector(api, 'a', clock, ev);
    const b = elector(api, 'b', clock, ev);
    const res = await Promise.all([a.tryOnce(), b.tryOnce()]);
    expect(res.filter(Boolean)).toHaveLength(1);
    expect([a.isLeader, b.isLeader].filter(Boolean)).toHaveLength(1);
  });

  it('a leader that cannot renew stops two thirds of the duration after its last renewal began', async () => {
    vi.useFakeTimers();
    const api = new FakeApi();
    const clock = { t: 1_000_000 };
    const ev: string[] = [];
    const a = elector(api, 'a', clock, ev);
    await a.tryOnce();
    api.down = true;
    vi.advanceTimersByTime(5000);
    await a.tryOnce();
    expect(a.isLeader).toBe(true);
    vi.advanceTimersByTime(4999);
    expect(a.isLeader).toBe(true);
    vi.advanceTimersByTime(1);
    expect(a.isLeader).toBe(false);
    expect(ev.at(-1)).toBe('a stop: could not renew the lease in time');
  });

  it('an attempt that succeeds after stop() does not start leading', async () => {
    const api = new FakeApi();
    const clock = { t: 1_000_000 };
    const ev: string[] = [];
    const a = elector(api, 'a', clock, ev);
    a.start(); // the first attempt is in flight
    await a.stop();
    expect(a.isLeader).toBe(false);
    expect(ev.filter((e) => e === 'a start').length).toBe(ev.filter((e) => e.startsWith('a stop')).length);
  });

  it('stop hands the lease over at once', async () => {
    const api = new FakeApi();
    const clock = { t: 1_000_000 };
    const ev: string[] = [];
    const a = elector(api, 'a', clock, ev);
    const b = elector(api, 'b', clock, ev);
    await a.tryOnce();
    await a.stop();
    expect(await b.tryOnce()).toBe(true);
    expect(ev).toEqual(['a start', 'a stop: stopped', 'b start']);
  });
});
