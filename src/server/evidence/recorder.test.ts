import { describe, expect, it, vi } from 'vitest';
import type { EvidenceInput } from '../../domain/evidence.ts';
import { HttpError } from '../http/errors.ts';
import { FlakyMemoryStore } from './memory-store.test-support.ts';
import { EvidenceRecorder } from './recorder.ts';

const FlakyStore = FlakyMemoryStore;

const log = () => ({ warn: vi.fn(), error: vi.fn() });
const ev = (type: EvidenceInput['type'], data: Record<string, unknown> = {}): EvidenceInput => ({
  time: new Date().toISOString(),
  type,
  actor: 'alice',
  app: 'nonprod/flux-system/Kustomization/web',
  data,
});
const until = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 2));
  }
};

describe('EvidenceRecorder: actions fail closed', () => {
  it('refuses the action with 503 EvidenceUnavailable and never calls it when the intent cannot be written', async () => {
    const store = new FlakyStore();
    const l = log();
    const rec = new EvidenceRecorder(store, l, { retryBaseMs: 1 });
    store.down = true;
    const action = vi.fn(async () => 'done');
    const err = await rec.act(ev('app.reconcile-requested'), action).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 503, code: 'EvidenceUnavailable' });
    // the store's own text goes to the log, not to the user
    expect((err as HttpError).message).not.toContain('SQLITE');
    expect((err as HttpError).detail).toContain('SQLITE_IOERR_WRITE');
    expect(action).not.toHaveBeenCalled();
    expect(store.events).toEqual([]);
    expect(rec.status()).toMatchObject({ pending: 0, refused: 1, failedAttempts: 1, failing: true });
    expect(rec.status().lastError).toContain('disk I/O error');
    expect(l.error).toHaveBeenCalledOnce();
    // nothing was queued: a refused action leaves no outcome behind
    store.down = false;
    await rec.flush();
    expect(store.events).toEqual([]);
  });

  it('a refused intent leaves nothing to retry: once the store answers again, it is no longer failing', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log(), { retryBaseMs: 5, retryMaxMs: 20 });
    store.unreachable = true;
    await rec.act(ev('app.reconcile-requested'), async () => 'done').catch(() => undefined);
    expect(rec.status()).toMatchObject({ pending: 0, failing: true });
    // still down: the probe fails and tries again
    await new Promise((r) => setTimeout(r, 60));
    expect(rec.status().failing).toBe(true);
    store.unreachable = false;
    await vi.waitFor(() => expect(rec.status().failing).toBe(false), { timeout: 2000, interval: 10 });
    expect(store.events).toEqual([]);
    rec.close();
  });

  it('a store that reads but takes no write (a full disk) stays failing until it takes one', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log(), { retryBaseMs: 5, retryMaxMs: 20 });
    store.down = true;
    await rec.act(ev('app.reconcile-requested'), async () => 'done').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    expect(await store.list()).toEqual([]); // reads pass
    expect(rec.status().failing).toBe(true);
    store.down = false;
    await vi.waitFor(() => expect(rec.status().failing).toBe(false), { timeout: 2000, interval: 10 });
    rec.close();
  });

  it('with a health probe, a store that stops taking writes is failing before any action meets it, and heals', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log(), { retryBaseMs: 5, retryMaxMs: 20, healthProbeMs: 10 });
    await new Promise((r) => setTimeout(r, 40));
    expect(rec.status().failing).toBe(false);
    store.down = true; // a full disk: nothing is written meanwhile
    await vi.waitFor(() => expect(rec.status().failing).toBe(true), { timeout: 2000, interval: 5 });
    expect(rec.status().lastError).toMatch(/SQLITE_IOERR_WRITE/);
    store.down = false;
    await vi.waitFor(() => expect(rec.status().failing).toBe(false), { timeout: 2000, interval: 5 });
    rec.close();
  });

  it('records intent → action → action.completed linked by intentSeq, the value passed through', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log());
    const order: string[] = [];
    const value = await rec.act(
      ev('app.reconcile-requested', { objects: ['Kustomization/flux-system/web'] }),
      async (intent) => {
        order.push(`action sees intent #${intent.seq}, ${store.events.length} record(s) written`);
        return { patched: 2 };
      },
      (o) => (o.ok ? { patched: o.value.patched } : {}),
    );
    expect(value).toEqual({ patched: 2 });
    expect(order).toEqual(['action sees intent #1, 1 record(s) written']);
    expect(store.types()).toEqual(['app.reconcile-requested', 'action.completed']);
    expect(store.events[1]).toMatchObject({
      actor: 'alice',
      app: 'nonprod/flux-system/Kustomization/web',
      data: { action: 'app.reconcile-requested', intentSeq: 1, patched: 2 },
    });
    expect(rec.status()).toMatchObject({ pending: 0, failing: false, refused: 0, failedAttempts: 0 });
  });

  it('a failing action is recorded as action.failed (generic text unless an HttpError) and its error re-thrown', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log());
    const boom = new Error('connect ECONNREFUSED 10.0.0.1:6443 token=secret');
    await expect(rec.act(ev('app.reconcile-requested'), async () => Promise.reject(boom))).rejects.toBe(boom);
    const http = new HttpError(403, 'Forbidden', 'cannot annotate Kustomization web: forbidden');
    await expect(rec.act(ev('app.reconcile-requested'), async () => Promise.reject(http))).rejects.toBe(http);
    expect(store.types()).toEqual([
      'app.reconcile-requested',
      'action.failed',
      'app.reconcile-requested',
      'action.failed',
    ]);
    expect(store.events[1]?.data).toEqual({
      action: 'app.reconcile-requested',
      intentSeq: 1,
      error: 'failed (see the console log)',
    });
    expect(store.events[3]?.data).toMatchObject({ intentSeq: 3, error: http.message });
  });

  it('an outcome the store refuses is queued and written once the store is back (the action still answers)', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log(), { retryBaseMs: 5, retryMaxMs: 20 });
    const value = await rec.act(ev('app.reconcile-requested'), async () => {
      store.down = true; // the store fails between the intent and the outcome
      return 'patched';
    });
    expect(value).toBe('patched');
    expect(store.types()).toEqual(['app.reconcile-requested']);
    expect(rec.status()).toMatchObject({ pending: 1, failing: true, refused: 0 });
    await until(() => store.attempts >= 4); // retried while down
    expect(rec.status().pending).toBe(1);
    store.down = false;
    await until(() => rec.status().pending === 0);
    expect(store.types()).toEqual(['app.reconcile-requested', 'action.completed']);
    expect(store.events[1]?.data).toMatchObject({ intentSeq: 1 });
    expect(rec.status().failing).toBe(false);
    expect((await store.verify()).ok).toBe(true);
  });
});

describe('EvidenceRecorder: refusals', () => {
  it('a refused attempt is one action.refused naming the action and why; the same one again within a minute is counted', async () => {
    const store = new FlakyStore();
    const r = new EvidenceRecorder(store, log());
    const refusal = {
      time: new Date().toISOString(),
      actor: 'bob',
      app: 'prod/flux-system/kustomization/web',
      action: 'prune.approved' as const,
      reason: 'you already decided on this prune',
      data: { previewId: 'p1' },
    };
    await r.refuse(refusal);
    await r.refuse(refusal);
    await r.refuse(refusal);
    // another target, another person: their own records
    await r.refuse({ ...refusal, data: { previewId: 'p2' } });
    await r.refuse({ ...refusal, actor: 'carol' });
    expect(store.events.map((e) => [e.type, e.actor, e.data.previewId])).toEqual([
      ['action.refused', 'bob', 'p1'],
      ['action.refused', 'bob', 'p2'],
      ['action.refused', 'carol', 'p1'],
    ]);
    expect(store.events[0]?.data).toEqual({
      previewId: 'p1',
      action: 'prune.approved',
      reason: 'you already decided on this prune',
    });
    // a minute later the next one is written, carrying the count of those left out
    const clock = vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 61_000);
    try {
      await r.refuse(refusal);
    } finally {
      clock.mockRestore();
    }
    expect(store.events.at(-1)?.data).toMatchObject({ previewId: 'p1', repeatedSinceLastRecord: 2 });
    expect(store.types()).not.toContain('prune.approved');
  });

  it('a refusal stands when the store is down: its record is queued and written later', async () => {
    const store = new FlakyStore();
    const r = new EvidenceRecorder(store, log(), { retryBaseMs: 60_000 });
    store.down = true;
    await r.refuse({ time: new Date().toISOString(), actor: 'bob', action: 'freeze.extended', reason: 'ended' });
    expect(r.status()).toMatchObject({ pending: 1, refused: 0 });
    store.down = false;
    r.retryNow();
    await until(() => store.events.length === 1);
    expect(store.events[0]).toMatchObject({ type: 'action.refused', data: { action: 'freeze.extended' } });
  });
});

describe('EvidenceRecorder: observations are retried, in order, never lost', () => {
  it('keeps observations in order while the store fails, backs off, and writes them all when it recovers', async () => {
    const store = new FlakyStore();
    const l = log();
    const rec = new EvidenceRecorder(store, l, { retryBaseMs: 10, retryMaxMs: 40 });
    rec.observe(ev('console.started', { n: 0 }));
    await rec.flush();
    expect(store.events).toHaveLength(1);

    // the back-off on a fake clock: the gaps between attempts are the delays the recorder chose, exactly, whatever
    // the machine's load (on the wall clock a niced run once saw a 40 ms back-off take 317 ms)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      store.down = true;
      const times: number[] = [];
      const append = store.append.bind(store);
      store.append = async (e) => {
        times.push(Date.now());
        return append(e);
      };
      for (let n = 1; n <= 5; n++) rec.observe(ev('access.denied', { n }));
      await rec.record(ev('auth.failed', { n: 6 })); // joins the queue behind the others, does not throw
      await vi.advanceTimersByTimeAsync(0);
      expect(rec.status()).toMatchObject({ pending: 6, failing: true });
      for (let i = 0; i < 100 && times.length < 6; i++) await vi.advanceTimersByTimeAsync(5);
      // one attempt at a time for the head of the queue, waiting longer each time: 10, 20, 40 ms, then capped at 40
      const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
      expect(gaps).toEqual([10, 20, 40, 40, 40]);
      const st = rec.status();
      expect(st.pending).toBe(6);
      expect(st.failedAttempts).toBe(times.length);
      expect(st.refused).toBe(0);
      expect(store.events).toHaveLength(1);
      // warned on the first failure, not on every retry
      expect(l.warn).toHaveBeenCalledTimes(1);

      store.down = false;
      await vi.advanceTimersByTimeAsync(40); // the next attempt finds the store back, and the backlog follows
      expect(store.events.map((e) => e.data.n)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      expect(rec.status()).toMatchObject({ pending: 0, failing: false, failedAttempts: times.length - 6 });
      expect(await store.verify()).toMatchObject({ ok: true, count: 7 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('a successful intent after an outage sends the backlog at once instead of waiting for the back-off', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log(), { retryBaseMs: 60_000, retryMaxMs: 60_000 });
    store.down = true;
    rec.observe(ev('cluster.lost', { n: 1 }));
    await until(() => store.attempts === 1);
    expect(rec.status()).toMatchObject({ pending: 1, failing: true });
    store.down = false;
    await rec.act(ev('app.reconcile-requested'), async () => undefined);
    await until(() => rec.status().pending === 0, 1000); // long before the 60 s back-off
    expect(store.types()).toEqual(['app.reconcile-requested', 'cluster.lost', 'action.completed']);
    rec.close();
  });

  it('record() writes before it returns when the store takes it (a read right after sees it)', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log());
    await rec.record(ev('auth.failed'));
    expect(store.types()).toEqual(['auth.failed']);
    expect(rec.status()).toMatchObject({ pending: 0, failing: false });
  });

  it('retryNow() tries the queue at once', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log(), { retryBaseMs: 60_000 });
    store.down = true;
    rec.observe(ev('cluster.lost'));
    await until(() => store.attempts === 1);
    store.down = false;
    rec.retryNow();
    await until(() => rec.status().pending === 0, 1000);
    expect(store.types()).toEqual(['cluster.lost']);
  });
});

describe('EvidenceRecorder: flush() and close()', () => {
  it('flush() waits until a healthy store has every queued record', async () => {
    const store = new FlakyStore();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const append = store.append.bind(store);
    store.append = async (e) => {
      await gate; // a slow store
      return append(e);
    };
    const rec = new EvidenceRecorder(store, log());
    for (let n = 0; n < 3; n++) rec.observe(ev('app.health-changed', { n }));
    let flushed = false;
    const f = rec.flush().then(() => (flushed = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(flushed).toBe(false);
    release();
    await f;
    expect(store.events.map((e) => e.data.n)).toEqual([0, 1, 2]);
    expect(rec.status().pending).toBe(0);
  });

  it('flush() returns at once while the store fails, leaving the backlog queued (shutdown is not held up)', async () => {
    const store = new FlakyStore();
    const rec = new EvidenceRecorder(store, log(), { retryBaseMs: 60_000 });
    store.down = true;
    rec.observe(ev('cluster.lost'));
    await until(() => store.attempts === 1);
    const t0 = Date.now();
    await rec.flush();
    expect(Date.now() - t0).toBeLessThan(100);
    expect(rec.status().pending).toBe(1);
    rec.close();
  });

  it('flush() on an empty queue resolves at once', async () => {
    const rec = new EvidenceRecorder(new FlakyStore(), log());
    await rec.flush();
    expect(rec.status()).toMatchObject({ pending: 0, failing: false });
  });

  it('close() stops retrying and logs what could not be written, rather than dropping it silently', async () => {
    const store = new FlakyStore();
    const l = log();
    const rec = new EvidenceRecorder(store, l, { retryBaseMs: 5 });
    store.down = true;
    rec.observe(ev('access.denied'));
    rec.observe(ev('cluster.lost'));
    await until(() => store.attempts >= 1);
    await rec.flush();
    rec.close();
    const attempts = store.attempts;
    await new Promise((r) => setTimeout(r, 50));
    expect(store.attempts).toBe(attempts);
    expect(l.error).toHaveBeenCalledWith(
      expect.objectContaining({ lost: 2, types: ['access.denied', 'cluster.lost'] }),
      expect.stringContaining('lost'),
    );
  });
});
