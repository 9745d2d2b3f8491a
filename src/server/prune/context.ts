// What every step of a prune shares: the service's dependencies and settings, the apiserver reads, this
// process's executor name and the executions it runs; and the one lookup of a stored preview by id.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DEFAULT_PRUNE_LIMITS, type PruneLimits } from '../../domain/prune.ts';
import { HttpError } from '../http/errors.ts';
import { LiveReader } from './live.ts';
import type { PropagationPolicy, PruneServiceDeps, PruneServiceOptions, StoredPreview } from './model.ts';

export interface PruneContext {
  readonly deps: PruneServiceDeps;
  readonly limits: PruneLimits;
  readonly ttlMs: number;
  readonly batchSize: number;
  readonly propagation: PropagationPolicy;
  /** a journal idle this long belongs to a dead executor (another replica) */
  readonly staleExecutionMs: number;
  /** how long an app Progressing between batches is given to settle before it counts as a regression */
  readonly settleMs: number;
  readonly live: LiveReader;
  /** this process: a restarted replica (same host name) recovers its own interrupted executions at once */
  readonly executor: string;
  /** executions running in this process (tests and shutdown wait for them) */
  readonly running: Map<string, Promise<void>>;
}

export function pruneContext(deps: PruneServiceDeps, opts: PruneServiceOptions = {}): PruneContext {
  return {
    deps,
    limits: opts.limits ?? DEFAULT_PRUNE_LIMITS,
    ttlMs: opts.ttlMs ?? 3_600_000,
    batchSize: opts.batchSize ?? 10,
    propagation: opts.propagationPolicy ?? 'Background',
    staleExecutionMs: opts.staleExecutionMs ?? 120_000,
    settleMs: opts.settleMs ?? 30_000,
    live: new LiveReader(deps),
    executor: `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
    running: new Map(),
  };
}

/** The stored preview, or a 404. */
export async function mustPreview(ctx: PruneContext, id: string): Promise<StoredPreview> {
  const p = await ctx.deps.store.get(id);
  if (!p) throw new HttpError(404, 'NotFound', `no prune preview ${id}`);
  return p;
}
