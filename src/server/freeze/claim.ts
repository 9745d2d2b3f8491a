// The claim of a freeze's end. The process that ends a freeze (an unfreeze, an expiry, a takeover) holds a claim
// on the row, renewed by a timer every few seconds while the end runs (a heartbeat); each of its writes names the
// claim's token (fencing: once another process has taken the end over, the old one can write nothing more), and
// before it acts outside the database (a restore patch) it renews the claim first.
//
// Another replica takes an end over only when its claim is dead: unchanged for a whole claim time as this process
// counts it (its own clock: a replica whose clock runs ahead does not take a live end) and past its expiry. See
// takeover.ts for what the taker does.
import { randomUUID } from 'node:crypto';
import type { FreezeChange, FreezeClaim, FreezeRow, FreezeStatus } from './store.ts';
import type { ClaimTiming, FreezeContext } from './types.ts';

export const DEFAULT_CLAIM_SECONDS = 30;
/** an end written before claims existed (no claim on its row) is dead once idle this long, as before */
export const UNCLAIMED_STALE_MS = 90_000;
/** a takeover whose restore failed leaves the end unclaimed: taken over again after this */
export const RESTORE_RETRY_MS = 60_000;

export function claimTiming(ttlMs: number): ClaimTiming {
  const renewMs = Math.max(100, Math.floor(ttlMs / 6));
  return { ttlMs, renewMs, watchMs: renewMs };
}

export function claimTimingFromEnv(env: NodeJS.ProcessEnv = process.env): ClaimTiming {
  const s = Number(env.CONSOLE_FREEZE_CLAIM_SECONDS ?? DEFAULT_CLAIM_SECONDS);
  return claimTiming((Number.isInteger(s) && s >= 2 && s <= 600 ? s : DEFAULT_CLAIM_SECONDS) * 1000);
}

/**
 * This process lost the end's claim: another one took the end over, or (`unrenewed`) this one could not renew it for
 * over half its time, so another may take it over soon; either way this one stops where it is.
 */
export class ClaimLostError extends Error {
  override name = 'ClaimLostError';
  constructor(
    readonly freezeId: string,
    readonly takenBy: string | null,
    readonly unrenewed = false,
  ) {
    super(
      unrenewed
        ? `the claim of the end of freeze ${freezeId} could not be renewed for over half its time`
        : `the end of freeze ${freezeId} was taken over${takenBy ? ` by ${takenBy}` : ''}`,
    );
  }
}

/** A stalled end waits for on-call: no replica takes it over by itself. */
export const isStalled = (f: Pick<FreezeRow, 'status' | 'claimToken' | 'doc'>): boolean =>
  f.status === 'ending' && !f.claimToken && f.doc.stall !== undefined;

/** The claim this process holds on one end: its heartbeat and its fenced writes. */
export class EndClaim {
  readonly token = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private lostTo: { by: string | null; unrenewed?: boolean } | undefined;
  /** let go (the end finished, went back, or stalled): nothing more to renew */
  private released = false;
  /** when the claim was last taken or renewed, by this process's clock */
  private renewedAt: number;
  private readonly aborted = new AbortController();

  constructor(
    private readonly ctx: FreezeContext,
    readonly id: string,
  ) {
    this.renewedAt = ctx.now();
  }

  /**
   * Aborted when the claim is lost: taken over, or not renewed for over half its time (a store that cannot be
   * reached). Another process may take an end over once its claim has been idle a whole claim time, so at half of
   * it this one stops waiting on what it was doing (a write-back's Git) and restores nothing (issue 40).
   */
  get signal(): AbortSignal {
    return this.aborted.signal;
  }

  /** the claim's columns as of now (taken or renewed) */
  fresh(): FreezeClaim {
    return { by: this.ctx.replica, token: this.token, until: this.until() };
  }

  private until(): string {
    return new Date(this.ctx.now() + this.ctx.timing.ttlMs).toISOString();
  }

  get lost(): boolean {
    return this.lostTo !== undefined;
  }

  /** The heartbeat starts (call once the claim is taken). */
  start(): void {
    this.ctx.holding.add(this.id);
    this.renewedAt = this.ctx.now();
    // one renewal at a time: a store that hangs is not sent a pile of them
    let renewing = false;
    this.timer = setInterval(() => {
      // checked on every beat, a renewal still hanging or not: unrenewed for half the claim time, the end stops
      if (!this.released && !this.lostTo && this.ctx.now() - this.renewedAt > this.ctx.timing.ttlMs / 2) {
        this.lostTo = { by: null, unrenewed: true };
        clearInterval(this.timer);
        this.ctx.deps.log?.error(
          { freeze: this.id, ms: this.ctx.now() - this.renewedAt },
          'freeze: the end claim could not be renewed for over half its time: this process stops the end',
        );
        this.aborted.abort(new ClaimLostError(this.id, null, true));
        return;
      }
      if (renewing) return;
      renewing = true;
      void this.renew()
        .catch(() => undefined)
        .finally(() => (renewing = false));
    }, this.ctx.timing.renewMs);
    this.timer.unref();
  }

  stop(): void {
    this.released = true;
    clearInterval(this.timer);
    this.timer = undefined;
    this.ctx.holding.delete(this.id);
  }

  /** Renews the claim; false when it was taken over. A store that cannot be reached is logged (and retried). */
  async renew(): Promise<boolean> {
    if (this.lostTo || this.released) return !this.lostTo;
    try {
      const at = this.ctx.now();
      if (await this.ctx.deps.store.renewClaim(this.id, this.token, this.until())) {
        if (!this.lostTo) this.renewedAt = at;
        return !this.lostTo;
      }
    } catch (e) {
      this.ctx.deps.log?.warn({ err: String(e), freeze: this.id }, 'freeze: the end claim could not be renewed');
      return !this.lostTo;
    }
    await this.markLost();
    return false;
  }

  /** Before an action outside the database: the claim renewed now, or ClaimLostError (the store's error if down). */
  async confirm(): Promise<void> {
    if (this.lostTo) throw this.lostError();
    const at = this.ctx.now();
    if (!(await this.ctx.deps.store.renewClaim(this.id, this.token, this.until()))) throw await this.markLost();
    if (this.lostTo) throw this.lostError();
    this.renewedAt = at;
  }

  /** `work`, unless the claim is lost first (then ClaimLostError; `work` is left to finish unobserved). */
  async whileHeld<T>(work: Promise<T>): Promise<T> {
    if (this.lostTo) throw this.lostError();
    const signal = this.aborted.signal;
    let onAbort: (() => void) | undefined;
    const lost = new Promise<never>((_, reject) => {
      onAbort = () => reject(this.lostError());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, lost]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      lost.catch(() => undefined);
    }
  }

  private lostError(): ClaimLostError {
    return new ClaimLostError(this.id, this.lostTo?.by ?? null, this.lostTo?.unrenewed === true);
  }

  /** `change` on the row as stored now, written only while this claim holds it. */
  async modify(change: (row: FreezeRow) => FreezeChange | undefined): Promise<FreezeRow> {
    if (this.lostTo) throw this.lostError();
    const r = await this.ctx.deps.store.modify(this.id, 'ending', change, { holder: this.token });
    if (!r) throw await this.markLost();
    if (r.row.claimToken !== this.token) this.release();
    return r.row;
  }

  /** `ending` → `to`, only while this claim holds it (leaving `ending` drops the claim). */
  async transition(
    to: FreezeStatus,
    end?: { by: string; reason: string },
    opts: { expiresAt?: string } = {},
  ): Promise<void> {
    if (this.lostTo) throw this.lostError();
    if (!(await this.ctx.deps.store.transition(this.id, 'ending', to, end, { ...opts, holder: this.token })))
      throw await this.markLost();
    this.release();
  }

  private release(): void {
    this.released = true;
    clearInterval(this.timer);
  }

  private async markLost(): Promise<ClaimLostError> {
    if (this.lostTo?.unrenewed) return this.lostError();
    if (!this.lostTo) {
      const row = await this.ctx.deps.store.get(this.id).catch(() => undefined);
      this.lostTo = { by: row?.claimedBy ?? null };
      clearInterval(this.timer);
      this.ctx.deps.log?.error(
        { freeze: this.id, takenBy: this.lostTo.by },
        'freeze: this process lost the claim of an end it was running',
      );
      this.aborted.abort(this.lostError());
    }
    return this.lostError();
  }
}

/**
 * Whether the end on `row` belongs to a process that died: its claim (or, for an end written before claims, the
 * row itself) unchanged for a whole claim time as this process has watched it, and past its expiry. The first
 * sight of a claim only starts the watch: a replica that just started waits a claim time before it takes over.
 */
export function claimIsDead(ctx: FreezeContext, row: FreezeRow): boolean {
  const key = [row.status, row.version, row.claimToken ?? '', row.claimedUntil ?? ''].join('|');
  const now = ctx.now();
  const seen = ctx.watched.get(row.id);
  if (!seen || seen.key !== key) {
    ctx.watched.set(row.id, { key, since: now });
    return false;
  }
  if (now - seen.since < ctx.timing.ttlMs) return false;
  const until = row.claimedUntil ? Date.parse(row.claimedUntil) : Date.parse(row.updatedAt) + UNCLAIMED_STALE_MS;
  return now >= until;
}
