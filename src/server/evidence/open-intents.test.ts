// Every recorded intent gets exactly one outcome, also when the process acting stops half-way (issue 42): the open
// intent's row (open-intents.ts) outlives the process, and another replica records `action.interrupted` for it once.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import { all, dialectOf } from '../store/dialect.ts';
import { armedFaults, holdAt } from './fault-points.ts';
import { OpenIntents } from './open-intents.ts';
import { EvidenceRecorder } from './recorder.ts';
import { SqliteEvidenceStore } from './sqlite-store.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function store() {
  const dir = mkdtempSync(join(tmpdir(), 'open-intents-'));
  const s = await SqliteEvidenceStore.open(dir);
  cleanup.push(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return s;
}

const log = { warn: vi.fn(), error: vi.fn() };
const intent = (type: 'freeze.started' | 'prune.approved') => ({
  time: new Date().toISOString(),
  type,
  actor: 'oncall',
  data: {},
});

function replica(s: Awaited<ReturnType<typeof store>>, name: string, staleMs = 60_000) {
  const recorder = new EvidenceRecorder(s, log);
  const open = new OpenIntents(dialectOf(s), { replica: name, staleMs, heartbeatMs: 60_000 });
  cleanup.push(recorder.trackOpenIntents(open));
  return { recorder, open };
}

const openRows = async (s: Awaited<ReturnType<typeof store>>) =>
  (await dialectOf(s).exec(all('SELECT seq, replica FROM open_intents'))) as Array<{ seq: number; replica: string }>;
const OUTCOMES = new Set(['action.completed', 'action.failed', 'action.interrupted', 'action.voided']);
const outcomesOf = (events: EvidenceEvent[], seq: number) =>
  events.filter((e) => OUTCOMES.has(e.type) && e.data.intentSeq === seq);

describe('open intents', () => {
  it('an action that ends, well or not, leaves no open intent and one outcome', async () => {
    const s = await store();
    const { recorder } = replica(s, 'host-a/1/a');
    await recorder.act(intent('freeze.started'), async () => 'ok');
    await expect(
      recorder.act(intent('prune.approved'), async () => {
        throw new Error('apiserver down');
      }),
    ).rejects.toThrow('apiserver down');
    expect(await openRows(s)).toEqual([]);
    const events = await s.list({ limit: 50 });
    for (const i of events.filter((e) => e.type === 'freeze.started' || e.type === 'prune.approved'))
      expect(outcomesOf(events, i.seq)).toHaveLength(1);
  });

  it('a process that stops mid-action: another replica records action.interrupted once, after the intent went stale', async () => {
    const s = await store();
    const a = replica(s, 'host-a/1/a', 5_000);
    const b = replica(s, 'host-b/2/b', 5_000);
    // A's action never ends (A "dies" here: nothing renews its row any more)
    void a.recorder.act(intent('freeze.started'), () => new Promise<never>(() => undefined));
    await vi.waitFor(async () => expect(await openRows(s)).toHaveLength(1));
    const [row] = await openRows(s);
    const t = Date.now();
    expect(await b.recorder.recordInterrupted(t)).toBe(0); // still renewed as far as anyone knows
    expect(await b.recorder.recordInterrupted(t + 6_000)).toBe(1);
    expect(await b.recorder.recordInterrupted(t + 12_000)).toBe(0); // once
    expect(await openRows(s)).toEqual([]);
    const events = await s.list({ limit: 50 });
    expect(outcomesOf(events, Number(row?.seq))).toEqual([
      expect.objectContaining({
        type: 'action.interrupted',
        actor: 'console',
        data: expect.objectContaining({ action: 'freeze.started', replica: 'host-a/1/a' }),
      }),
    ]);
  });

  it('a running action renews its row: it is never taken for a stopped one', async () => {
    const s = await store();
    const a = replica(s, 'host-a/1/a', 5_000);
    const b = replica(s, 'host-b/2/b', 5_000);
    void a.recorder.act(intent('freeze.started'), () => new Promise<never>(() => undefined));
    await vi.waitFor(async () => expect(await openRows(s)).toHaveLength(1));
    const t = Date.now();
    await a.open.beat(t + 4_000);
    expect(await b.recorder.recordInterrupted(t + 6_000)).toBe(0);
  });

  it('a process never claims its own running actions, and a live replica on the same host never claims them either', async () => {
    const s = await store();
    const a = replica(s, 'host-a/1/a', 5_000);
    void a.recorder.act(intent('prune.approved'), () => new Promise<never>(() => undefined));
    await vi.waitFor(async () => expect(await openRows(s)).toHaveLength(1));
    expect(await a.recorder.recordInterrupted(Date.now() + 10 * 60_000)).toBe(0);
    const sibling = replica(s, 'host-a/2/b', 5_000);
    expect(await sibling.recorder.recordInterrupted()).toBe(0);
    expect(await openRows(s)).toHaveLength(1);
  });

  it("staleness is judged by the database's clock: a replica whose own clock runs 3 minutes ahead claims nothing running", async () => {
    const s = await store();
    const a = replica(s, 'host-a/1/a', 120_000);
    const b = replica(s, 'host-b/2/b', 120_000);
    void a.recorder.act(intent('freeze.started'), () => new Promise<never>(() => undefined));
    await vi.waitFor(async () => expect(await openRows(s)).toHaveLength(1));
    // B's process clock is 3 minutes ahead (issue 42's clock-skew cells: ±2 min between replicas)
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 180_000 });
    try {
      expect(await b.recorder.recordInterrupted()).toBe(0);
      expect(await openRows(s)).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a row not renewed for staleMs by the database's clock is claimed by another replica's sweep", async () => {
    const s = await store();
    const a = replica(s, 'host-a/1/a', 50);
    void a.recorder.act(intent('freeze.started'), () => new Promise<never>(() => undefined));
    await vi.waitFor(async () => expect(await openRows(s)).toHaveLength(1));
    replica(s, 'host-b/2/b', 50);
    // B's own sweep (every second, no time given) claims it once it is 50 ms old by the database's clock
    await vi.waitFor(async () => expect(await openRows(s)).toEqual([]), { timeout: 5_000 });
    expect(await s.list({ type: 'action.interrupted', limit: 10 })).toHaveLength(1);
  });

  it('two replicas sweeping at once claim each stopped intent once between them', async () => {
    const s = await store();
    const a = replica(s, 'host-a/1/a', 1_000);
    for (let i = 0; i < 5; i++)
      void a.recorder.act(intent('freeze.started'), () => new Promise<never>(() => undefined));
    await vi.waitFor(async () => expect(await openRows(s)).toHaveLength(5));
    const b = replica(s, 'host-b/2/b', 1_000);
    const c = replica(s, 'host-c/3/c', 1_000);
    const later = Date.now() + 5_000;
    const counts = await Promise.all([b.recorder.recordInterrupted(later), c.recorder.recordInterrupted(later)]);
    expect(counts[0] + counts[1]).toBe(5);
    const events = await s.list({ type: 'action.interrupted', limit: 50 });
    expect(new Set(events.map((e) => e.data.intentSeq)).size).toBe(5);
    expect(events).toHaveLength(5);
  });
});

describe('an outcome and a sweep racing for one intent (the store away longer than the staleness)', () => {
  /** the store as the acting replica sees it: every write fails while `down` */
  function flaky(s: Awaited<ReturnType<typeof store>>) {
    const state = { down: false };
    const fail = () => Promise.reject(new Error('connection refused'));
    const view = new Proxy(s, {
      get(target, key, receiver) {
        if (state.down && (key === 'append' || key === 'appendIf')) return fail;
        const v = Reflect.get(target, key, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    return { view, state };
  }

  async function race(peerFirst: boolean) {
    const s = await store();
    const { view, state } = flaky(s);
    const recorder = new EvidenceRecorder(view, log, { retryBaseMs: 10, retryMaxMs: 20 });
    const open = new OpenIntents(dialectOf(s), { replica: 'host-a/1/a', staleMs: 5_000, heartbeatMs: 60_000 });
    cleanup.push(recorder.trackOpenIntents(open));
    const peer = replica(s, 'host-b/2/b', 5_000);
    await recorder.act(intent('freeze.started'), async () => {
      state.down = true; // the store goes away while the action runs: its outcome waits in the queue
      return 'ok';
    });
    const [row] = await openRows(s);
    const seq = Number(row?.seq);
    expect(recorder.status().pending).toBe(1);
    if (peerFirst) expect(await peer.recorder.recordInterrupted(Date.now() + 6_000)).toBe(1);
    state.down = false;
    recorder.retryNow();
    await vi.waitFor(() => expect(recorder.status().pending).toBe(0));
    if (!peerFirst) expect(await peer.recorder.recordInterrupted(Date.now() + 6_000)).toBe(0);
    expect(await openRows(s)).toEqual([]);
    const events = await s.list({ limit: 50 });
    return { seq, outcomes: outcomesOf(events, seq), resolved: events.filter((e) => e.type === 'action.resolved') };
  }

  it('the sweep first: one outcome (interrupted), then what happened as action.resolved', async () => {
    const { seq, outcomes, resolved } = await race(true);
    expect(outcomes.map((e) => e.type)).toEqual(['action.interrupted']);
    expect(resolved).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ intentSeq: seq, outcome: 'action.completed' }) }),
    ]);
  });

  it('the outcome first: it is the one outcome, and the sweep finds nothing to claim', async () => {
    const { outcomes, resolved } = await race(false);
    expect(outcomes.map((e) => e.type)).toEqual(['action.completed']);
    expect(resolved).toEqual([]);
  });
});

describe('fault points', () => {
  it('arms only well-formed points; unset arms none', () => {
    expect(armedFaults(undefined).size).toBe(0);
    expect([...armedFaults(' freeze.started:after-intent, prune.approved:after-act,bogus, x:during ')]).toEqual([
      'freeze.started:after-intent',
      'prune.approved:after-act',
    ]);
    expect([...armedFaults('prune.batch:mid-act')]).toEqual(['prune.batch:mid-act']);
  });

  it('a held point waits for the runner: paused names it, go releases it, the files are cleared; others pass', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fault-dir-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    // not armed: goes on at once
    await holdAt(dir, 'freeze.started:after-intent');
    writeFileSync(join(dir, 'arm'), 'freeze.started:after-act\n');
    await holdAt(dir, 'freeze.started:after-intent'); // another point: goes on
    let released = false;
    const held = holdAt(dir, 'freeze.started:after-act').then(() => (released = true));
    await vi.waitFor(() => expect(existsSync(join(dir, 'paused'))).toBe(true));
    expect(readFileSync(join(dir, 'paused'), 'utf8')).toBe('freeze.started:after-act');
    // a second request reaching the point while the first is held goes on (the arm was taken)
    await holdAt(dir, 'freeze.started:after-act');
    await new Promise((r) => setTimeout(r, 60));
    expect(released).toBe(false);
    writeFileSync(join(dir, 'go'), '');
    await held;
    expect(['arm', 'paused', 'go'].filter((f) => existsSync(join(dir, f)))).toEqual([]);
  });
});
