// Delivery of the evidence chain to each sink as CDEvents (issue 28): in chain order (so in order per app),
// at least once (the cursor moves only after a record was taken or given up on; a stop mid-retry leaves it), each
// POST signed (signature.ts) and sent as a CloudEvent in binary mode (ce-* headers, the CDEvent as the body).
// A busy or absent sink (5xx, 408, 429, no answer) is retried with back-off; a record still refused after the
// sink's deadLetterAfter, or refused outright (another 4xx, a redirect), goes to the dead-letter list and the
// sink moves on. While a sink is down (its last record went to the dead letters) each next record gets one
// attempt, so a dead sink does not hold every record for the whole wait. Only one replica delivers (the
// recorder Lease's holder: main.ts); a dead letter may be retried on demand from any replica.
// A notifications sink (format slack or json) is delivered the same way; its bodies come from `notifications`.
import { toCDEvent } from '../../domain/cdevents.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import type { SinkConfig } from './config.ts';
import { SIGNATURE_HEADER, signBody } from './signature.ts';
import type { SinkStore } from './sink-store.ts';
import { fetchCauseCode } from '../http/fetch-failure.ts';

/** What a notifications sink sends for a record: its body, or null when the record makes none for this sink. */
export interface NotificationRenderer {
  render(sink: SinkConfig, e: EvidenceEvent): Promise<Record<string, unknown> | null>;
}

/** one POST: its body and the headers that describe it (the signature is added when sent) */
interface Outgoing {
  body: string;
  headers: Record<string, string>;
}

export interface SinkDeliveryOptions {
  sinks: SinkConfig[];
  store: EvidenceStore;
  sinkStore: SinkStore;
  /** the CDEvents context source (the console's public URL, or a name) and the links' base */
  source: string;
  publicUrl?: string;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
  /** the bodies of the notifications sinks (without it, they send nothing) */
  notifications?: NotificationRenderer;
  fetch?: typeof fetch;
  pollMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

export interface SinkStatus {
  name: string;
  /**
   * scheme, host and port only: never the path, the query or credentials (a webhook's token lives in its path, as
   * Slack's does, or its query)
   */
  url: string;
  /** cdevents, or a notifications sink's slack or json */
  format: SinkConfig['format'];
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

/** One start's loops: each checks its own flag, so a quick stop-then-start never leaves two loops per sink. */
interface Generation {
  stopped: boolean;
  /** aborts the POSTs in flight at stop (a replica that lost the Lease sends nothing after) */
  abort: AbortController;
  done: Promise<void>;
}

export class SinkDelivery {
  private gen: Generation | undefined;
  /** the stop of the last generation: a new one starts only after it (its loops have returned) */
  private stopping: Promise<void> = Promise.resolve();
  private readonly wakers = new Set<() => void>();
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
    if (this.gen && !this.gen.stopped) return;
    const g: Generation = { stopped: false, abort: new AbortController(), done: Promise.resolve() };
    this.gen = g;
    g.done = this.stopping.then(async () => {
      if (g.stopped) return;
      await Promise.all(
        this.o.sinks.map((s) =>
          this.run(s, g).catch((e) => this.o.log.warn({ sink: s.name, err: message(e) }, 'event sink stopped')),
        ),
      );
    });
  }

  async stop(): Promise<void> {
    const g = this.gen;
    if (g && !g.stopped) {
      g.stopped = true;
      g.abort.abort();
      for (const w of [...this.wakers]) w();
      this.stopping = g.done.then(() => {
        if (this.gen === g) for (const s of this.st.values()) s.running = false;
      });
    }
    await this.stopping;
  }

  /** One more attempt at a dead letter, now (any replica): removed from the list when the sink takes it. */
  async retryDeadLetter(sinkName: string, seq: number): Promise<{ ok: true } | { ok: false; error: string }> {
    const sink = this.o.sinks.find((s) => s.name === sinkName);
    if (!sink) return { ok: false, error: `no sink ${sinkName}` };
    const dead = await this.o.sinkStore.deadLetter(sinkName, seq);
    if (!dead) return { ok: false, error: `no dead letter ${seq} for sink ${sinkName}` };
    const [e] = await this.o.store.list({ afterSeq: seq - 1, beforeSeq: seq + 1, order: 'asc', limit: 1 });
    const out = e ? await this.outgoing(sink, e) : null;
    if (!e || !out) return { ok: false, error: `evidence record ${seq} is not a sink's` };
    const a = await this.post(sink, e, out);
    if (a.ok) {
      const removed = await this.o.sinkStore.removeDeadLetter(sinkName, seq);
      const s = this.st.get(sinkName);
      if (s) {
        s.delivered++;
        if (removed) s.deadLettered = Math.max(0, s.deadLettered - 1);
      }
      return { ok: true };
    }
    // only a row still there is updated: a retry that raced a successful one brings nothing back
    await this.o.sinkStore.updateDeadLetter(sinkName, seq, {
      attempts: dead.attempts + 1,
      lastError: a.error,
      deadAt: new Date(this.now()).toISOString(),
    });
    return { ok: false, error: a.error };
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** What this sink is sent for a record (null: nothing): its CDEvent, or its notification's body. */
  private async outgoing(sink: SinkConfig, e: EvidenceEvent): Promise<Outgoing | null> {
    if (sink.format === 'cdevents') {
      const ev = toCDEvent(e, { source: this.o.source, ...(this.o.publicUrl ? { publicUrl: this.o.publicUrl } : {}) });
      if (!ev) return null;
      return {
        body: JSON.stringify(ev),
        headers: {
          'ce-specversion': '1.0',
          'ce-id': ev.context.id,
          'ce-source': ev.context.source,
          'ce-type': ev.context.type,
          'ce-time': ev.context.timestamp,
        },
      };
    }
    const body = await this.o.notifications?.render(sink, e);
    return body ? { body: JSON.stringify(body), headers: {} } : null;
  }

  /** sleeps `ms`, or less when its generation stops */
  private sleep(g: Generation, ms: number): Promise<void> {
    if (g.stopped) return Promise.resolve();
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

  /**
   * A store call retried until it answers: the evidence store is the source of truth. Tried at least once even
   * when stopping (a cursor write after a delivery must not be skipped); after that, given up when stopped.
   */
  private async storeCall<T>(
    g: Generation,
    sink: string,
    what: string,
    f: () => Promise<T>,
  ): Promise<{ ok: true; value: T } | { ok: false }> {
    for (let attempt = 0; ; attempt++) {
      try {
        return { ok: true, value: await f() };
      } catch (e) {
        if (g.stopped) return { ok: false };
        if (attempt === 0) this.o.log.warn({ sink, err: message(e) }, `event sink: ${what} failed; retrying`);
        await this.sleep(g, Math.min(1000 * 2 ** attempt, 15_000));
      }
    }
  }

  private async head(): Promise<number> {
    const [last] = await this.o.store.list({ order: 'desc', limit: 1 });
    return last?.seq ?? 0;
  }

  private async run(sink: SinkConfig, g: Generation): Promise<void> {
    const s = this.st.get(sink.name) ?? freshStatus(sink);
    s.running = true;
    const saved = await this.storeCall(g, sink.name, 'reading its cursor', () => this.o.sinkStore.cursor(sink.name));
    if (!saved.ok || g.stopped) return;
    let cursor: number;
    if (saved.value === undefined) {
      const start =
        sink.from === 'start'
          ? { ok: true as const, value: 0 }
          : await this.storeCall(g, sink.name, 'reading the head', () => this.head());
      if (!start.ok) return;
      cursor = start.value;
      const at = cursor;
      await this.storeCall(g, sink.name, 'writing its cursor', () => this.o.sinkStore.advance(sink.name, at));
      this.o.log.info({ sink: sink.name, from: at }, 'event sink: first delivery starts after this record');
    } else cursor = saved.value;
    s.cursor = cursor;
    const dead = await this.storeCall(g, sink.name, 'counting', () => this.o.sinkStore.deadLetterCount(sink.name));
    if (dead.ok) s.deadLettered = dead.value;
    while (!g.stopped) {
      const from = cursor;
      const batch = await this.storeCall(g, sink.name, 'reading the chain', () =>
        this.o.store.list({ afterSeq: from, order: 'asc', limit: 100 }),
      );
      if (!batch.ok || g.stopped) return;
      const head = await this.head().catch(() => s.head);
      s.head = head;
      if (!batch.value.length) {
        s.lag = head === null ? null : Math.max(0, head - cursor);
        await this.sleep(g, this.o.pollMs ?? 1000);
        continue;
      }
      for (const e of batch.value) {
        // a notification's recipients are read from the store: retried like every store call
        const out = await this.storeCall(g, sink.name, 'preparing a record', () => this.outgoing(sink, e));
        if (!out.ok || g.stopped) return;
        // stopped before the record was taken or given up on: the cursor stays (at least once)
        if (out.value && !(await this.deliver(g, sink, s, e, out.value))) return;
        // taken or given up on: the cursor moves, even when stopping meanwhile (no second delivery after a restart)
        cursor = e.seq;
        const at = cursor;
        const moved = await this.storeCall(g, sink.name, 'writing its cursor', () =>
          this.o.sinkStore.advance(sink.name, at),
        );
        if (moved.ok) s.cursor = cursor;
        if (g.stopped) return;
        s.lag = head === null ? null : Math.max(0, head - cursor);
      }
    }
  }

  /** true once the record was taken or dead-lettered; false when the delivery stopped first */
  private async deliver(
    g: Generation,
    sink: SinkConfig,
    s: SinkStatus,
    e: EvidenceEvent,
    out: Outgoing,
  ): Promise<boolean> {
    const firstAttemptAt = this.now();
    for (let attempt = 1; ; attempt++) {
      const a = await this.post(sink, e, out, g.abort.signal);
      if (a.ok) {
        s.delivered++;
        if (s.down) this.o.log.info({ sink: sink.name, seq: e.seq }, 'event sink answers again');
        s.down = false;
        s.retrying = null;
        s.lastDeliveredAt = new Date(this.now()).toISOString();
        return true;
      }
      if (g.stopped) return false; // aborted by the stop, or failed while stopping: tried again by the next holder
      s.failedAttempts++;
      s.lastError = a.error;
      const late = this.now() - firstAttemptAt >= sink.deadLetterAfterMs;
      if (a.permanent || late || s.down) {
        const saved = await this.storeCall(g, sink.name, 'writing a dead letter', () =>
          this.o.sinkStore.addDeadLetter({
            sink: sink.name,
            seq: e.seq,
            attempts: attempt,
            lastError: a.error,
            firstFailedAt: new Date(firstAttemptAt).toISOString(),
            deadAt: new Date(this.now()).toISOString(),
          }),
        );
        if (!saved.ok) return false;
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
      s.retrying = { seq: e.seq, attempts: attempt, since: new Date(firstAttemptAt).toISOString() };
      const most = sink.retryMaxMs ?? this.o.retryMaxMs ?? 30_000;
      await this.sleep(g, Math.min((this.o.retryBaseMs ?? 1000) * 2 ** (attempt - 1), most));
      if (g.stopped) return false;
    }
  }

  private async post(sink: SinkConfig, e: EvidenceEvent, out: Outgoing, stop?: AbortSignal): Promise<Attempt> {
    const body = out.body;
    const headers = {
      'content-type': 'application/json',
      ...out.headers,
      'x-console-delivery': `${sink.name}:${e.seq}`,
      [SIGNATURE_HEADER]: signBody(sink.secret, body, Math.floor(this.now() / 1000)),
    };
    const timeout = AbortSignal.timeout(this.o.timeoutMs ?? 10_000);
    try {
      const r = await (this.o.fetch ?? fetch)(sink.url, {
        method: 'POST',
        body,
        headers,
        redirect: 'manual',
        signal: stop ? AbortSignal.any([stop, timeout]) : timeout,
      });
      await r.body?.cancel().catch(() => undefined);
      if (r.status >= 200 && r.status < 300) return { ok: true };
      if (r.status >= 300 && r.status < 400)
        return { ok: false, permanent: true, error: `HTTP ${r.status}: a redirect, which is not followed` };
      const transient = r.status >= 500 || r.status === 408 || r.status === 429;
      return { ok: false, permanent: !transient, error: `HTTP ${r.status}` };
    } catch (err) {
      const name = (err as Error).name;
      const cause = fetchCauseCode(err);
      return { ok: false, permanent: false, error: name === 'TimeoutError' ? 'no answer in time' : (cause ?? name) };
    }
  }
}

function freshStatus(s: SinkConfig): SinkStatus {
  const u = new URL(s.url);
  return {
    name: s.name,
    url: `${u.protocol}//${u.host}`,
    format: s.format,
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
