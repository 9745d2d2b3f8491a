// Delivery of the evidence chain to each sink as CDEvents (issue 28): in chain order (so in order per app),
// at least once (the cursor moves only after a record was taken or given up on; a stop mid-retry leaves it), each
// POST signed (signature.ts) and sent as a CloudEvent in binary mode (ce-* headers, the CDEvent as the body).
// A busy or absent sink (5xx, 408, 429, no answer) is retried with back-off; a record still refused after the
// sink's deadLetterAfter, or refused outright (another 4xx, a redirect), goes to the dead-letter list and the
// sink moves on. While a sink is down (its last record went to the dead letters) each next record gets one
// attempt, so a dead sink does not hold every record for the whole wait. Only one replica delivers (the
// recorder Lease's holder: main.ts); a dead letter may be retried on demand from any replica.
import { toCDEvent, type CDEvent } from '../../domain/cdevents.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import type { SinkConfig } from './config.ts';
import { SIGNATURE_HEADER, signBody } from './signature.ts';
import type { SinkStore } from './sink-store.ts';

export interface SinkDeliveryOptions {
  sinks: SinkConfig[];
  store: EvidenceStore;
  sinkStore: SinkStore;
  /** the CDEvents context source (the console's public URL, or a name) and the links' base */
  source: string;
  publicUrl?: string;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
  fetch?: typeof fetch;
  pollMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

export interface SinkStatus {
  name: string;
  /** scheme, host and path: never a query or credentials */
  url: string;
  running: boolean;
  cursor: number | null;
  head: number | null;
  lag: number | null;
  delivered: number;
  failedAttempts: number;
  deadLettered: number;
  down: boolean;
  lastError: string | null;
  lastDeliveredAt: string | null;
  /** the record being retried, when one is */
  retrying: { seq: number; attempts: number; since: string } | null;
}

type Attempt = { ok: true } | { ok: false; permanent: boolean; error: string };

export class SinkDelivery {
  private stopped = true;
  private readonly wakers = new Set<() => void>();
  private loops: Promise<void>[] = [];
  private readonly st = new Map<string, SinkStatus>();

  constructor(private readonly o: SinkDeliveryOptions) {
    for (const s of o.sinks) this.st.set(s.name, freshStatus(s));
  }

  sinks(): SinkConfig[] {
    return this.o.sinks;
  }

  status(): SinkStatus[] {
    return [...this.st.values()].map((s) => ({ ...s, retrying: s.retrying ? { ...s.retrying } : null }));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loops = this.o.sinks.map((s) =>
      this.run(s).catch((e) => this.o.log.warn({ sink: s.name, err: message(e) }, 'event sink stopped')),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.wakers) w();
    await Promise.all(this.loops);
    this.loops = [];
    for (const s of this.st.values()) s.running = false;
  }

  /** One more attempt at a dead letter, now (any replica): removed from the list when the sink takes it. */
  async retryDeadLetter(sinkName: string, seq: number): Promise<{ ok: true } | { ok: false; error: string }> {
    const sink = this.o.sinks.find((s) => s.name === sinkName);
    if (!sink) return { ok: false, error: `no sink ${sinkName}` };
    const dead = (await this.o.sinkStore.deadLetters(sinkName)).find((d) => d.seq === seq);
    if (!dead) return { ok: false, error: `no dead letter ${seq} for sink ${sinkName}` };
    const [e] = await this.o.store.list({ afterSeq: seq - 1, beforeSeq: seq + 1, order: 'asc', limit: 1 });
    const ev = e ? this.cdevent(e) : null;
    if (!e || !ev) return { ok: false, error: `evidence record ${seq} is not a sink's` };
    const a = await this.post(sink, e, ev);
    if (a.ok) {
      await this.o.sinkStore.removeDeadLetter(sinkName, seq);
      const s = this.st.get(sinkName);
      if (s) {
        s.delivered++;
        s.deadLettered = Math.max(0, s.deadLettered - 1);
      }
      return { ok: true };
    }
    await this.o.sinkStore.addDeadLetter({
      ...dead,
      attempts: dead.attempts + 1,
      lastError: a.error,
      deadAt: new Date(this.now()).toISOString(),
    });
    return { ok: false, error: a.error };
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  private cdevent(e: EvidenceEvent): CDEvent | null {
    return toCDEvent(e, { source: this.o.source, ...(this.o.publicUrl ? { publicUrl: this.o.publicUrl } : {}) });
  }

  /** sleeps `ms`, or less when stopped */
  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wakers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }

  /** a store call retried until it answers (or the delivery stops): the evidence store is the source of truth */
  private async storeCall<T>(sink: string, what: string, f: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        return await f();
      } catch (e) {
        if (attempt === 0) this.o.log.warn({ sink, err: message(e) }, `event sink: ${what} failed; retrying`);
        await this.sleep(Math.min(1000 * 2 ** attempt, 15_000));
      }
    }
    return undefined;
  }

  private async head(): Promise<number> {
    const [last] = await this.o.store.list({ order: 'desc', limit: 1 });
    return last?.seq ?? 0;
  }

  private async run(sink: SinkConfig): Promise<void> {
    const s = this.st.get(sink.name) ?? freshStatus(sink);
    s.running = true;
    const saved = await this.storeCall(sink.name, 'reading its cursor', () => this.o.sinkStore.cursor(sink.name));
    if (this.stopped) return;
    let cursor: number;
    if (saved === undefined) {
      const start = sink.from === 'start' ? 0 : await this.storeCall(sink.name, 'reading the head', () => this.head());
      if (start === undefined) return;
      cursor = start;
      await this.storeCall(sink.name, 'writing its cursor', () => this.o.sinkStore.advance(sink.name, start));
      this.o.log.info({ sink: sink.name, from: start }, 'event sink: first delivery starts after this record');
    } else cursor = saved;
    s.cursor = cursor;
    s.deadLettered =
      (await this.storeCall(sink.name, 'counting', () => this.o.sinkStore.deadLetterCount(sink.name))) ?? 0;
    while (!this.stopped) {
      const from = cursor;
      const batch: EvidenceEvent[] | undefined = await this.storeCall(sink.name, 'reading the chain', () =>
        this.o.store.list({ afterSeq: from, order: 'asc', limit: 100 }),
      );
      if (!batch || this.stopped) return;
      s.head = batch.length ? (batch.at(-1)?.seq ?? null) : await this.head().catch(() => s.head);
      if (!batch.length) {
        s.lag = s.head === null ? null : Math.max(0, s.head - cursor);
        await this.sleep(this.o.pollMs ?? 1000);
        continue;
      }
      for (const e of batch) {
        const ev = this.cdevent(e);
        if (ev && !(await this.deliver(sink, s, e, ev))) return; // stopped mid-retry: the cursor stays
        if (this.stopped) return;
        cursor = e.seq;
        const at = cursor;
        await this.storeCall(sink.name, 'writing its cursor', () => this.o.sinkStore.advance(sink.name, at));
        s.cursor = cursor;
      }
      s.lag = s.head === null ? null : Math.max(0, s.head - cursor);
    }
  }

  /** true once the record was taken or dead-lettered; false when the delivery stopped first */
  private async deliver(sink: SinkConfig, s: SinkStatus, e: EvidenceEvent, ev: CDEvent): Promise<boolean> {
    const firstFailedAt = this.now();
    for (let attempt = 1; ; attempt++) {
      const a = await this.post(sink, e, ev);
      if (a.ok) {
        s.delivered++;
        if (s.down) this.o.log.info({ sink: sink.name, seq: e.seq }, 'event sink answers again');
        s.down = false;
        s.retrying = null;
        s.lastDeliveredAt = new Date(this.now()).toISOString();
        return true;
      }
      s.failedAttempts++;
      s.lastError = a.error;
      const late = this.now() - firstFailedAt >= sink.deadLetterAfterMs;
      if (a.permanent || late || s.down) {
        const saved = await this.storeCall(sink.name, 'writing a dead letter', () =>
          this.o.sinkStore.addDeadLetter({
            sink: sink.name,
            seq: e.seq,
            attempts: attempt,
            lastError: a.error,
            firstFailedAt: new Date(firstFailedAt).toISOString(),
            deadAt: new Date(this.now()).toISOString(),
          }),
        );
        if (saved === undefined && this.stopped) return false;
        s.deadLettered++;
        s.retrying = null;
        // logged once per episode: while a sink is down its next records are dead letters without a line each
        if (!s.down)
          this.o.log.warn(
            { sink: sink.name, seq: e.seq, attempts: attempt, err: a.error },
            a.permanent ? 'event sink refused a record: dead letter' : 'event sink down: dead letters until it answers',
          );
        // refused outright: the sink is up, this one record is not for it; given up after the wait: it is down
        if (!a.permanent) s.down = true;
        return true;
      }
      s.retrying = { seq: e.seq, attempts: attempt, since: new Date(firstFailedAt).toISOString() };
      await this.sleep(Math.min((this.o.retryBaseMs ?? 1000) * 2 ** (attempt - 1), this.o.retryMaxMs ?? 30_000));
      if (this.stopped) return false;
    }
  }

  private async post(sink: SinkConfig, e: EvidenceEvent, ev: CDEvent): Promise<Attempt> {
    const body = JSON.stringify(ev);
    const headers = {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': ev.context.id,
      'ce-source': ev.context.source,
      'ce-type': ev.context.type,
      'ce-time': ev.context.timestamp,
      'x-console-delivery': `${sink.name}:${e.seq}`,
      [SIGNATURE_HEADER]: signBody(sink.secret, body, Math.floor(this.now() / 1000)),
    };
    try {
      const r = await (this.o.fetch ?? fetch)(sink.url, {
        method: 'POST',
        body,
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
      });
      await r.body?.cancel().catch(() => undefined);
      if (r.status >= 200 && r.status < 300) return { ok: true };
      if (r.status >= 300 && r.status < 400)
        return { ok: false, permanent: true, error: `HTTP ${r.status}: a redirect, which is not followed` };
      const transient = r.status >= 500 || r.status === 408 || r.status === 429;
      return { ok: false, permanent: !transient, error: `HTTP ${r.status}` };
    } catch (err) {
      const name = (err as Error).name;
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return { ok: false, permanent: false, error: name === 'TimeoutError' ? 'no answer in time' : (cause ?? name) };
    }
  }
}

function freshStatus(s: SinkConfig): SinkStatus {
  const u = new URL(s.url);
  return {
    name: s.name,
    url: `${u.protocol}//${u.host}${u.pathname}`,
    running: false,
    cursor: null,
    head: null,
    lag: null,
    delivered: 0,
    failedAttempts: 0,
    deadLettered: 0,
    down: false,
    lastError: null,
    lastDeliveredAt: null,
    retrying: null,
  };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
