// The one way the BFF writes evidence.
//
// Actions fail closed: `act()` records the intent (who, what, why, on which snapshot) before acting; a store
// that cannot write refuses the action with a 503 and nothing happens. The outcome (done or failed) is
// recorded after, linked to the intent by its sequence number; if the store fails just then, the outcome is
// queued like an observation.
// Observations (what the console saw happen) never block anything: they are queued in order and retried
// with back-off until the store takes them; the counts of pending and failed appends are visible (health
// endpoint, UI banner), nothing is dropped silently.
// Refusals: an attempt refused by a check that needs no write is one `action.refused` record (`refuse()`), never
// the action's intent; only what passes those checks records its intent.
import { EventEmitter } from 'node:events';
import type { EvidenceEvent, EvidenceInput, EvidenceType } from '../../domain/evidence.ts';
import { HttpError } from '../http/errors.ts';
import { faultPoint } from './fault-points.ts';
import type { OpenIntentRow, OpenIntents } from './open-intents.ts';
import type { AppendGuard, EvidenceStore } from './store.ts';

export interface RecorderLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RecorderStatus {
  /** observations and outcomes waiting for the store */
  pending: number;
  /** append attempts that failed since start (each retry counts) */
  failedAttempts: number;
  /** actions refused because their intent could not be recorded */
  refused: number;
  /**
   * the store is failing now: the last attempt failed and nothing succeeded since (with nothing queued, a read of
   * the store that answers again counts: a refused intent leaves no write to retry)
   */
  failing: boolean;
  lastError?: string;
  lastFailureAt?: string;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** An attempt at a governed action that a check refused before its intent was recorded. */
export interface Refusal {
  time: string;
  actor: string;
  app?: string | null;
  cluster?: string | null;
  env?: string | null;
  /** the action refused: the evidence type its intent would have had (`prune.approved`, `freeze.extended`, …) */
  action: EvidenceType;
  /** why, as the person was told */
  reason: string;
  /** what the attempt named (a preview, a freeze) and who made it (issuer, subject, person) */
  data?: Record<string, unknown>;
}

/** The same refusal repeated within this long is counted, not appended again. */
const REFUSAL_WINDOW_MS = 60_000;

export interface RecorderOptions {
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * while nothing is written, probe the store with a write this often, so that a store that stopped taking writes
   * (a full disk, a read-only volume) is reported failing before the next action finds it; unset: no probe
   */
  healthProbeMs?: number;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** An outcome's guard, what it becomes when the guard fails, and what to do once it is written. */
interface Guarded {
  guard: AppendGuard;
  instead: (e: EvidenceInput) => EvidenceInput;
  done: () => void;
}

export class EvidenceRecorder extends EventEmitter {
  private readonly queue: EvidenceInput[] = [];
  private draining: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private retryRequested = false;
  private closed = false;
  private readonly st: RecorderStatus = { pending: 0, failedAttempts: 0, refused: 0, failing: false };
  private readonly refusals = new Map<string, { until: number; repeated: number }>();
  private open: OpenIntents | undefined;
  /** outcomes that delete their intent's open row in their own transaction (settle()) */
  private readonly guarded = new WeakMap<EvidenceInput, Guarded>();

  constructor(
    readonly store: EvidenceStore,
    private readonly log: RecorderLog,
    private readonly opts: RecorderOptions = {},
  ) {
    super();
    if (opts.healthProbeMs) {
      this.healthTimer = setInterval(() => this.healthProbe(), opts.healthProbeMs);
      this.healthTimer.unref();
    }
  }

  private healthTimer: NodeJS.Timeout | undefined;

  /** One write to the store while it is idle and thought well: a failure is reported (and probed until it heals). */
  private healthProbe(): void {
    if (this.closed || this.st.failing || this.queue.length || this.draining || !this.store.probeWrite) return;
    this.store.probeWrite().catch((err: unknown) => {
      if (this.closed || this.st.failing) return;
      this.failed(err);
      this.log.warn({ err: this.st.lastError }, 'evidence store refuses writes (found by the health probe)');
      this.probeLater();
    });
  }

  status(): RecorderStatus {
    return { ...this.st, pending: this.queue.length };
  }

  /** Fail closed: records an action's intent; when the store cannot write, the action is refused (503). */
  async intent(e: EvidenceInput): Promise<EvidenceEvent> {
    try {
      const ev = await this.append(e);
      this.succeeded();
      return ev;
    } catch (err) {
      this.failed(err);
      this.st.refused++;
      this.probeLater();
      this.log.error({ err: message(err), type: e.type }, 'evidence store cannot write: action refused');
      throw new HttpError(
        503,
        'EvidenceUnavailable',
        'the evidence store cannot record this action right now, so it was not done; nothing changed — try again shortly',
        undefined,
        message(err),
      );
    }
  }

  /**
   * An observation written before the caller goes on when the store takes it now (a read right after sees
   * it); when the store fails, or older records still wait, it joins the queue and is retried (never lost).
   * Never throws: what the caller answers does not depend on the store.
   */
  async record(e: EvidenceInput): Promise<void> {
    if (this.queue.length === 0 && !this.closed) {
      try {
        await this.append(e);
        this.succeeded();
        return;
      } catch (err) {
        this.failed(err);
        this.queue.push(e);
        this.retryLater();
        return;
      }
    }
    this.observe(e);
  }

  /** An action's outcome: recorded like `record()` (now if possible, else queued and retried). */
  async outcome(e: EvidenceInput): Promise<void> {
    await this.record(e);
  }

  /**
   * An action: intent first (fail closed), then the action, then its outcome (`action.completed` or
   * `action.failed`, naming the intent's sequence number). The action's error is re-thrown.
   */
  async act<T>(
    intent: EvidenceInput,
    action: (intent: EvidenceEvent) => Promise<T>,
    describe: (o: Outcome<T>) => Record<string, unknown> = () => ({}),
  ): Promise<T> {
    const rec = await this.intent(intent);
    await this.open?.opened(rec.seq, intent.type);
    await faultPoint(`${intent.type}:after-intent`);
    const base = {
      actor: intent.actor,
      app: intent.app ?? null,
      cluster: intent.cluster ?? null,
      env: intent.env ?? null,
    };
    let value: T;
    try {
      value = await action(rec);
    } catch (error) {
      await this.settle(rec.seq, {
        ...base,
        time: new Date().toISOString(),
        type: 'action.failed',
        data: {
          action: intent.type,
          intentSeq: rec.seq,
          error: error instanceof HttpError ? error.message : 'failed (see the console log)',
          ...describe({ ok: false, error }),
        },
      });
      throw error;
    }
    await faultPoint(`${intent.type}:after-act`);
    await this.settle(rec.seq, {
      ...base,
      time: new Date().toISOString(),
      type: 'action.completed',
      data: { action: intent.type, intentSeq: rec.seq, ...describe({ ok: true, value }) },
    });
    return value;
  }

  /**
   * Records intent `seq`'s outcome (now, or queued and retried like an observation). Where its open row was written,
   * the outcome deletes the row in its own transaction (AppendGuard): a sweep that took the action for stopped (a
   * store away longer than the staleness) and recorded `action.interrupted` first has the outcome; what really
   * happened then follows as `action.resolved`, never a second outcome.
   */
  private async settle(seq: number, e: EvidenceInput): Promise<void> {
    const open = this.open;
    const guard = open?.outcomeGuard(seq);
    if (!open || !guard || !this.store.appendIf) {
      await this.outcome(e);
      await open?.closed(seq);
      return;
    }
    this.guarded.set(e, {
      guard,
      instead: (x) => ({
        ...x,
        type: 'action.resolved',
        data: {
          ...x.data,
          outcome: x.type,
          note: 'recorded interrupted while this console could not reach the evidence store; this is what happened',
        },
      }),
      done: () => open.settled(seq),
    });
    await this.outcome(e);
  }

  /**
   * Notes every action's open intent in the database (open-intents.ts), renews this process's, and gives each intent
   * left open by a process that stopped its outcome, `action.interrupted` (at once, then every half `staleMs`).
   * Returns the stop.
   */
  trackOpenIntents(open: OpenIntents): () => void {
    this.open = open;
    const beat = setInterval(() => void open.beat(), open.heartbeatMs);
    const sweep = setInterval(() => void this.recordInterrupted(), Math.max(1000, open.staleMs / 2));
    beat.unref();
    sweep.unref();
    void this.recordInterrupted();
    return () => {
      clearInterval(beat);
      clearInterval(sweep);
      this.open = undefined;
    };
  }

  /** Claims the intents of processes that stopped and records `action.interrupted` for each; returns how many. */
  async recordInterrupted(now?: number): Promise<number> {
    const open = this.open;
    if (!open) return 0;
    const interrupted = (r: OpenIntentRow): EvidenceInput => ({
      time: new Date(now ?? Date.now()).toISOString(),
      type: 'action.interrupted',
      actor: 'console',
      data: {
        action: r.type,
        intentSeq: r.seq,
        replica: r.replica,
        lastAliveAt: new Date(r.aliveAt).toISOString(),
        note: 'the console process acting stopped before recording the outcome: whether it took effect is unknown',
      },
    });
    try {
      if (this.store.appendIf) {
        // each claim deletes the row in the record's own transaction: one of the sweeps and the late outcome wins
        let n = 0;
        for (const r of await open.stale(now)) if (await this.store.appendIf(interrupted(r), open.claimGuard(r))) n++;
        return n;
      }
      const rows = await open.claimStopped(now);
      for (const r of rows) await this.record(interrupted(r));
      return rows.length;
    } catch (err) {
      this.log.warn({ err: message(err) }, 'cannot look for interrupted actions now (retried)');
      return 0;
    }
  }

  /**
   * A refused attempt: ONE `action.refused` record naming the action and the reason, written like an observation
   * (the refusal stands when the store is down; the record is retried). The same refusal (who, what, on what, why)
   * repeated within a minute is counted and carried by its next record (`repeatedSinceLastRecord`), not appended
   * again: nobody fills the chain by retrying.
   */
  async refuse(r: Refusal): Promise<void> {
    const key = JSON.stringify([r.actor, r.action, r.app ?? null, r.cluster ?? null, r.env ?? null, r.reason, r.data]);
    const now = Date.now();
    const seen = this.refusals.get(key);
    if (seen && seen.until > now) {
      seen.repeated++;
      return;
    }
    if (this.refusals.size > 10_000) for (const [k, v] of this.refusals) if (v.until <= now) this.refusals.delete(k);
    this.refusals.set(key, { until: now + REFUSAL_WINDOW_MS, repeated: 0 });
    await this.record({
      time: r.time,
      type: 'action.refused',
      actor: r.actor,
      app: r.app ?? null,
      cluster: r.cluster ?? null,
      env: r.env ?? null,
      data: {
        ...r.data,
        action: r.action,
        reason: r.reason,
        ...(seen?.repeated ? { repeatedSinceLastRecord: seen.repeated } : {}),
      },
    });
  }

  /** An observation: appended in order, retried with back-off while the store fails. */
  observe(e: EvidenceInput): void {
    this.queue.push(e);
    this.kick();
  }

  /** Waits until every queued record is written (or the store is failing: then resolves with the backlog). */
  async flush(): Promise<void> {
    while (this.queue.length && !this.st.failing && !this.closed) {
      this.kick();
      if (!this.draining) return;
      await this.draining;
    }
  }

  /** Tries the queue now instead of waiting for the back-off (the store came back). */
  retryNow(): void {
    this.cancelTimer();
    // an attempt in flight that fails is then followed by one more at once, not by the back-off
    if (this.draining) this.retryRequested = true;
    else this.kick();
  }

  /** Stops retrying; what is still queued then is logged as lost (call `flush()` first). */
  close(): void {
    this.closed = true;
    this.cancelTimer();
    clearInterval(this.healthTimer);
    if (this.queue.length)
      this.log.error(
        { lost: this.queue.length, types: [...new Set(this.queue.map((e) => e.type))], err: this.st.lastError },
        'evidence store could not write these records before shutdown: they are lost',
      );
  }

  private kick(): void {
    if (this.draining || this.timer || this.closed) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      // retryNow() came while the last attempt was failing: try again now instead of after the back-off
      if (this.retryRequested && this.queue.length) {
        this.retryRequested = false;
        this.cancelTimer();
        this.kick();
      }
      this.retryRequested = false;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length && !this.closed) {
      const next = this.queue[0] as EvidenceInput;
      try {
        await this.append(next);
        this.queue.shift();
        this.succeeded();
      } catch (err) {
        this.failed(err);
        if (this.retryRequested) {
          this.retryRequested = false;
          continue;
        }
        this.retryLater();
        return;
      }
    }
  }

  /** One append, timed: `append` events (seconds, ok) feed the metrics. The store's own promise is returned. */
  private append(e: EvidenceInput): Promise<EvidenceEvent> {
    const t0 = performance.now();
    const p = this.guarded.has(e) ? this.appendGuarded(e) : this.store.append(e);
    const done = (ok: boolean) => () => this.emit('append', (performance.now() - t0) / 1000, ok);
    p.then(done(true), done(false));
    return p;
  }

  /** An outcome whose guard failed (its intent was claimed meanwhile) is written as what `instead` makes of it. */
  private async appendGuarded(e: EvidenceInput): Promise<EvidenceEvent> {
    const g = this.guarded.get(e) as Guarded;
    const ev = (await this.store.appendIf?.(e, g.guard)) ?? (await this.store.append(g.instead(e)));
    this.guarded.delete(e);
    g.done();
    return ev;
  }

  /**
   * A refused intent leaves nothing queued to retry, so `failing` would stay set until the next action: with an
   * empty queue, the store is probed on the retry back-off until it takes a write (EvidenceStore.probeWrite, one
   * row outside the chain), and that clears it.
   */
  private probeLater(): void {
    if (this.timer || this.closed || this.queue.length) return;
    const base = this.opts.retryBaseMs ?? 250;
    const delay = Math.min(this.opts.retryMaxMs ?? 30_000, base * 2 ** Math.min(this.attempt - 1, 16));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.st.failing || this.closed) return;
      if (this.queue.length) return this.kick();
      // a write (reads alone pass on a full disk); a store without the probe: a read
      (this.store.probeWrite?.() ?? this.store.list({ limit: 1 })).then(
        () => {
          if (!this.queue.length && !this.draining) this.succeeded();
        },
        (err: unknown) => {
          this.failed(err);
          this.probeLater();
        },
      );
    }, delay);
    this.timer.unref();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Back-off: base × 2^(failures − 1), capped; the queue is tried again then (or at the next success). */
  private retryLater(): void {
    if (this.timer || this.closed) return;
    const base = this.opts.retryBaseMs ?? 250;
    const delay = Math.min(this.opts.retryMaxMs ?? 30_000, base * 2 ** Math.min(this.attempt - 1, 16));
    if (this.attempt === 1 || this.attempt % 10 === 0)
      this.log.warn(
        { err: this.st.lastError, pending: this.queue.length, retryInMs: delay },
        'evidence append failed; will retry',
      );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, delay);
    this.timer.unref();
  }

  private succeeded(): void {
    const was = this.st.failing;
    this.attempt = 0;
    this.st.failing = false;
    if (was) {
      this.emit('status', this.status());
      // the store is back: the backlog goes now, not when the back-off timer would have fired
      this.cancelTimer();
      this.kick();
    }
  }

  private failed(err: unknown): void {
    const was = this.st.failing;
    this.attempt++;
    this.st.failedAttempts++;
    this.st.failing = true;
    this.st.lastError = message(err).slice(0, 300);
    this.st.lastFailureAt = new Date().toISOString();
    if (!was) this.emit('status', this.status());
  }
}
