// The BFF's expiry: at start, freezes that expired while the console was down end (the others get their
// timers); an end a dead process left half-done is taken over once stale; other replicas' changes move the
// timers here; an expired freeze ends with Git winning for every live change.
import { finishFreeze } from './restore.ts';
import type { FreezeRow } from './store.ts';
import type { FreezeContext } from './types.ts';

/** an end (status `ending`) unchanged this long belongs to a process that died */
const ENDING_STALE_MS = 90_000;

/** At start: freezes that expired while the console was down end now; the others get their timers. */
export async function recoverFreezes(ctx: FreezeContext): Promise<void> {
  for (const f of await ctx.deps.store.list({ active: true })) {
    if (f.status === 'ending') {
      await resumeIfStale(ctx, f);
      continue;
    }
    if (Date.parse(f.expiresAt) <= ctx.now())
      await ctx
        .track(expireFreeze(ctx, f.id, true))
        .catch((e: unknown) => ctx.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: expiry at start failed'));
    else ctx.arm(f);
  }
}

/**
 * Ends that a dead process left half-done (checked at start and periodically): another replica may be
 * ending it right now (a rolling update starts Pods while others work), so only an end idle for
 * ENDING_STALE_MS is taken over; it finishes restoring (the decisions were recorded before acting).
 */
export async function resumeStaleEnds(ctx: FreezeContext): Promise<void> {
  for (const f of await ctx.deps.store.list({ active: true })) if (f.status === 'ending') await resumeIfStale(ctx, f);
}

async function resumeIfStale(ctx: FreezeContext, f: FreezeRow): Promise<void> {
  if (ctx.now() - Date.parse(f.updatedAt) < ENDING_STALE_MS || ctx.resuming.has(f.id)) return;
  ctx.resuming.add(f.id);
  try {
    await ctx.track(finishFreeze(ctx, f, undefined, 'resumed after a restart', f.doc.decisions ?? [], true));
  } catch (e) {
    ctx.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: resuming an end failed');
  } finally {
    ctx.resuming.delete(f.id);
  }
}

/** Another replica changed a freeze: its expiry timer here follows the store (armed, moved or dropped). */
export async function rearmFreeze(ctx: FreezeContext, id: string): Promise<void> {
  const f = await ctx.deps.store.get(id);
  if (f && f.status === 'active') ctx.arm(f);
  else ctx.disarm(id);
}

/** Every active freeze's timer from the store (after this replica missed notifications). */
export async function rearmAllFreezes(ctx: FreezeContext): Promise<void> {
  for (const f of await ctx.deps.store.list({ active: true })) if (f.status === 'active') ctx.arm(f);
}

/** The BFF's expiry: Git wins for every live change (written back by no one), the automation is restored. */
export async function expireFreeze(ctx: FreezeContext, id: string, atStart: boolean): Promise<void> {
  const { deps } = ctx;
  const f = await deps.store.get(id);
  if (!f || f.status !== 'active') return;
  // extended meanwhile (maybe through another replica): the store's expiry is the one that counts
  if (Date.parse(f.expiresAt) - ctx.now() > 1000) return ctx.arm(f);
  // only the expiry read here: an extension committed since (any replica) keeps the freeze
  if (!(await deps.store.transition(id, 'active', 'ending', undefined, { expect: { expiresAt: f.expiresAt } })))
    return void rearmFreeze(ctx, id).catch(() => undefined);
  try {
    await deps.recorder.act(
      {
        time: new Date(ctx.now()).toISOString(),
        type: 'freeze.expired',
        actor: 'console',
        app: f.app,
        cluster: f.cluster,
        env: f.env ?? f.doc.targets[0]?.env ?? null,
        data: {
          freezeId: id,
          expiresAt: f.expiresAt,
          ...(atStart ? { expiredWhileConsoleWasDown: true } : {}),
          liveChanges: 'Git wins: the controller reverts them',
        },
      },
      async () =>
        finishFreeze(ctx, f, undefined, atStart ? 'expired while the console was down' : 'expired', [], false),
    );
  } catch (e) {
    // retried a minute later, by whichever replica's timer fires first (the retry time is the stored
    // expiry, so no replica retries at once): an expired freeze must not hold forever
    const retryAt = new Date(ctx.now() + 60_000).toISOString();
    if ((await deps.store.get(id))?.status === 'ending')
      await deps.store.transition(id, 'ending', 'active', undefined, { expiresAt: retryAt });
    ctx.arm({ id, expiresAt: retryAt });
    throw e;
  }
}
