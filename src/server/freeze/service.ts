// Incident freezes: on-call pauses an app (or every app of an environment on a cluster) with a reason and an
// expiry, sees the live changes made meanwhile, and at the end hands each one back to Git (write-back on a
// branch / pull request) or lets Git win; then the prior automation is restored exactly.
//
// The pattern of every action: validate → evidence intent (fail closed) → the store (claims: one freeze per
// app, across replicas) → the cluster (patches carry the resourceVersion) → outcome evidence. Expiry is the
// BFF's: a timer per freeze and a check at start (a freeze that expired while the console was down ends
// then, with evidence saying so). Out-of-band changes of a frozen app object (resumed by hand, annotations
// dropped, deleted) are observed from the informers and recorded once each. No Fastify types here.
//
// Every end (unfreeze, expiry, takeover) holds a claim on the freeze that its process renews while it runs
// (claim.ts); every replica watches the ends in progress and takes over only one whose claim died (takeover.ts).
//
// This class holds the state (expiry timers, the watch of ends, work in flight, the claims' copy); each job is its
// own file: start.ts (freeze, extend), read.ts, end.ts (write-back), restore.ts, expiry.ts, takeover.ts,
// out-of-band.ts.
import { hostname } from 'node:os';
import { claimTimingFromEnv } from './claim.ts';
import { endFreeze } from './end.ts';
import { expireFreeze, rearmAllFreezes, rearmFreeze, recoverFreezes } from './expiry.ts';
import { FreezeClaims, observeApp } from './out-of-band.ts';
import { freezeChanges, listFreezes, viewFreeze } from './read.ts';
import { createFreeze, extendFreeze, type PlannedBy } from './start.ts';
import type { FreezeRow } from './store.ts';
import { takeOverDeadEnds } from './takeover.ts';
import type {
  AppChange,
  EndDecision,
  FreezeActor,
  FreezeContext,
  FreezeServiceDeps,
  FreezeStart,
  FreezeView,
} from './types.ts';

export type {
  AppChange,
  EndDecision,
  FreezeActor,
  FreezeServiceDeps,
  FreezeStart,
  FreezeView,
  WriteBackOutcome,
} from './types.ts';

const MAX_TIMER_MS = 2 ** 31 - 1;

export class FreezeService {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** ends of dead processes being resumed here */
  private readonly resuming = new Set<string>();
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;
  /** the watch of ends in progress (takeover.ts), from recover() on */
  private watch: NodeJS.Timeout | undefined;
  private watching: Promise<void> | undefined;
  private readonly claims: FreezeClaims;
  /** what the jobs (start.ts, end.ts, expiry.ts, …) use of this service */
  private readonly ctx: FreezeContext;

  constructor(private readonly deps: FreezeServiceDeps) {
    this.claims = new FreezeClaims(deps.store, () => this.now());
    this.ctx = {
      deps,
      now: () => this.now(),
      track: <T>(p: Promise<T>) => this.track(p),
      arm: (f) => this.arm(f),
      disarm: (id) => {
        clearTimeout(this.timers.get(id));
        this.timers.delete(id);
      },
      resuming: this.resuming,
      dropClaims: () => this.claims.drop(),
      timing: deps.timing ?? claimTimingFromEnv(),
      replica: deps.replica ?? `${hostname()}:${process.pid}`,
      holding: new Set(),
      watched: new Map(),
    };
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    void p.finally(() => this.running.delete(p)).catch(() => undefined);
    return p;
  }

  /** Waits for expiries and out-of-band checks in flight (shutdown, tests). */
  async settled(): Promise<void> {
    this.closed = true;
    clearInterval(this.watch);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }

  private arm(f: Pick<FreezeRow, 'id' | 'expiresAt'>): void {
    clearTimeout(this.timers.get(f.id));
    if (this.closed) return;
    const ms = Math.max(0, Date.parse(f.expiresAt) - this.now());
    const t = setTimeout(
      () => {
        this.timers.delete(f.id);
        if (Date.parse(f.expiresAt) - this.now() > 1000) return this.arm(f);
        void this.track(this.expire(f.id, false)).catch((e: unknown) =>
          this.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: expiry failed'),
        );
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    t.unref();
    this.timers.set(f.id, t);
  }

  // ---- start ------------------------------------------------------------------------------------------

  /**
   * At start: freezes that expired while the console was down end now; the others get their timers; the ends in
   * progress are watched from now on (every few seconds), and one whose claim died is taken over (takeover.ts).
   */
  async recover(): Promise<void> {
    if (!this.watch && !this.closed) {
      this.watch = setInterval(() => void this.resumeStale().catch(() => undefined), this.ctx.timing.watchMs);
      this.watch.unref();
    }
    await recoverFreezes(this.ctx);
    await this.resumeStale();
  }

  /** The ends in progress looked at once: one whose claim died is taken over (takeover.ts). */
  resumeStale(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.watching ??= this.track(takeOverDeadEnds(this.ctx))
      .catch((e: unknown) => this.deps.log?.warn({ err: String(e) }, 'freeze: watching the ends in progress failed'))
      .finally(() => (this.watching = undefined));
    return this.watching;
  }

  /** Another replica changed a freeze: its expiry timer here follows the store (armed, moved or dropped). */
  rearm(id: string): Promise<void> {
    return rearmFreeze(this.ctx, id);
  }

  /** Every active freeze's timer from the store (after this replica missed notifications). */
  rearmAll(): Promise<void> {
    return rearmAllFreezes(this.ctx);
  }

  // ---- freeze, read, extend, end ----------------------------------------------------------------------

  /** `planned`: a planned window's occurrence starts it (window-scheduler.ts), until the occurrence's end. */
  create(user: FreezeActor, input: FreezeStart, planned?: PlannedBy): Promise<FreezeView> {
    return createFreeze(this.ctx, user, input, planned);
  }

  /** The freeze holding each app (its claim in the store). */
  holders(): Promise<Map<string, string>> {
    return this.deps.store.claims();
  }

  view(id: string): Promise<FreezeView> {
    return viewFreeze(this.ctx, id);
  }

  list(active: boolean): Promise<FreezeView[]> {
    return listFreezes(this.ctx, active);
  }

  /** The live changes made since the freeze began, on every app it holds. Unknown diffs are an error, never "none". */
  changes(id: string): Promise<{ changes: AppChange[]; unknown: Array<{ appId: string; reason: string }> }> {
    return freezeChanges(this.ctx, id);
  }

  extend(
    id: string,
    user: FreezeActor,
    body: { minutes: number; reason: string },
    planned?: PlannedBy,
  ): Promise<FreezeView> {
    return extendFreeze(this.ctx, id, user, body, planned);
  }

  /** Ends a freeze: each listed change written back to Git or left to Git, then the prior automation restored. */
  end(id: string, user: FreezeActor, decisions: EndDecision[]): Promise<FreezeView> {
    return endFreeze(this.ctx, id, user, decisions);
  }

  /** The BFF's expiry: Git wins for every live change (written back by no one), the automation is restored. */
  expire(id: string, atStart: boolean): Promise<void> {
    return expireFreeze(this.ctx, id, atStart);
  }

  // ---- out of band ------------------------------------------------------------------------------------

  /** A frozen app resumed directly, its freeze annotations dropped, or deleted: recorded once per state. */
  observe(appId: string, deleted: boolean): Promise<void> {
    return observeApp(this.ctx, this.claims, appId, deleted);
  }
}
