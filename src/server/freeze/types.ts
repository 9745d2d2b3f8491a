// The freeze service's shapes: who acts, what the service depends on, what it returns, and the context its
// jobs (start, end, restore, expiry, out of band) share with the FreezeService that holds timers and claims.
import type { App } from '../../domain/app.ts';
import type { FieldChange } from '../../domain/field-diff.ts';
import type { FreezeRequest, LiveChange } from '../../domain/freeze.ts';
import type { Obj } from '../../domain/object-meta.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import type { FreezeRow, FreezeStore } from './store.ts';
import type { SettleOpts } from './uncertain.ts';

export interface FreezeActor {
  name: string;
  /** whether this person may freeze / end on a cluster + env (the session's grants) */
  may(cluster: string, env: string): boolean;
  /** records a denial (403) as evidence */
  denied?(cluster: string, env: string, app: string | undefined, reason: string): void;
}

export interface WriteBackOutcome {
  branch: string;
  commit: string | null;
  placements: unknown[];
  pullRequest?: { number: number; url: string } | undefined;
  forgeError?: string | undefined;
}

export interface FreezeServiceDeps {
  recorder: EvidenceRecorder;
  store: FreezeStore;
  apps: {
    get(id: string): App | undefined;
    list(): App[];
    raw(id: string): Obj | undefined;
  };
  /** how long a freeze patch the cluster never answered is settled for (uncertain.ts; tests inject time) */
  settle?: SettleOpts;
  /** the connection an action goes out on: the user's (impersonated) or, for expiry, the console's own */
  conn(cluster: string, user?: FreezeActor): ClusterConnection;
  /** the app's field diff (Git vs live, with field managers); throws when it cannot be computed */
  diff(a: App): Promise<{
    state: 'ok' | 'unknown';
    error?: string | undefined;
    objects: Array<{ ref: ObjectRef; changes: FieldChange[] }>;
  }>;
  /** commits live values to the app's overlay on a new branch (and opens a PR where there is a forge) */
  writeBack?(
    a: App,
    req: { branch: string; message: string; author: string; changes: LiveChange[] },
  ): Promise<WriteBackOutcome>;
  now?(): number;
  log?: { warn(o: unknown, m?: string): void; error(o: unknown, m?: string): void };
  /** the claim of an end: how long it holds unless renewed (default CONSOLE_FREEZE_CLAIM_SECONDS, 30 s) */
  timing?: ClaimTiming;
  /** this process as a claim names it (default host name and pid) */
  replica?: string;
  /**
   * tests only (CONSOLE_FREEZE_MIN_SECONDS, config.ts): a freeze may be asked for in `seconds`, down to this many;
   * unset (the default), a request naming `seconds` is refused and freezes last whole minutes
   */
  minSeconds?: number | undefined;
}

/** What a freeze is started with: one app or an environment on a cluster, why, and for how long. */
export interface FreezeStart extends FreezeRequest {
  cluster: string;
  env?: string | undefined;
  app?: string | undefined;
  /** the length in seconds instead of minutes: only where FreezeServiceDeps.minSeconds allows it (tests) */
  seconds?: number | undefined;
}

/** How long an end's claim holds unless renewed, how often it is renewed and how often replicas look for dead ones. */
export interface ClaimTiming {
  ttlMs: number;
  renewMs: number;
  /** how often a replica looks for ends whose claim died */
  watchMs: number;
}

export interface FreezeView extends FreezeRow {
  /** whether the freeze still holds its apps */
  active: boolean;
}

/** A live change and the frozen app whose diff showed it. */
export type AppChange = LiveChange & { appId: string };

export interface EndDecision {
  change: string;
  action: 'write-back' | 'git-wins';
}

/** What one end did so far (what it reports truthfully when another process took it over). */
export interface EndProgress {
  written: string[];
  restored: string[];
}

/** What the service's jobs share: its dependencies and clock, its expiry timers, its copy of the claims. */
export interface FreezeContext {
  readonly deps: FreezeServiceDeps;
  now(): number;
  /** `p` as work in flight that settled() waits for */
  track<T>(p: Promise<T>): Promise<T>;
  /** the freeze's expiry timer, set (or moved) to its expiresAt */
  arm(f: Pick<FreezeRow, 'id' | 'expiresAt'>): void;
  /** the freeze's expiry timer dropped */
  disarm(id: string): void;
  /** ends of dead processes being resumed here */
  readonly resuming: Set<string>;
  /** drops the copy of the freeze claims (a freeze made or ended here counts at once) */
  dropClaims(): void;
  /** the claim of an end (claim.ts) */
  readonly timing: ClaimTiming;
  /** this process as a claim names it */
  readonly replica: string;
  /** ends this process holds the claim of (never taken over here) */
  readonly holding: Set<string>;
  /** the claims of ends run elsewhere as this process last saw them, and since when (claim.ts claimIsDead) */
  readonly watched: Map<string, { key: string; since: number }>;
}
