// The BFF's expiry: at start, freezes that expired while the console was down end (the others get their
// timers; the ends in progress are watched by takeover.ts);
// other replicas' changes move the timers here; an expired freeze ends with Git winning for every live change,
// under the end's claim (claim.ts) like every end.
import { ClaimLostError, EndClaim } from './claim.ts';
import { finishFreeze } from './restore.ts';
import type { FreezeRow } from './store.ts';
import type { FreezeContext } from './types.ts';

/** At start: freezes that expired while the console was down end now; the others get their timers. */
export async function recoverFreezes(ctx: FreezeContext): Promise<void> {
  for (const f of await ctx.deps.store.list({ active: true })) {
    if (f.status === 'ending') continue;
    if (Date.parse(f.expiresAt) <= ctx.now())
      await ctx
        .track(expireFreeze(ctx, f.id, true))
        .catch((e: unknown) => ctx.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: expiry at start failed'));
    else ctx.arm(f);
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
  const claim = new EndClaim(ctx, id);
  const how = atStart ? 'expired while the console was down' : 'expired';
  let f: FreezeRow | undefined;
  for (let i = 0; ; i++) {
    f = await deps.store.get(id);
    if (!f || f.status !== 'active') return;
    // extended meanwhile (maybe through another replica): the store's expiry is the one that counts
    if (Date.parse(f.expiresAt) - ctx.now() > 1000) return ctx.arm(f);
    // only the row read here (its version): an extension committed since (any replica) keeps the freeze
    // Git wins for every change: no decisions (an earlier unfreeze that failed leaves none behind)
    const doc = {
      ...f.doc,
      decisions: [],
      stall: undefined,
      ending: {
        attempt: (f.doc.ending?.attempt ?? 0) + 1,
        how,
        by: 'console',
        at: new Date(ctx.now()).toISOString(),
        writeBack: [],
      },
    };
    if (await deps.store.claimEnd(id, 'active', f, claim.fresh(), doc)) {
      f = { ...f, status: 'ending', doc };
      break;
    }
    if (i >= 4) return void rearmFreeze(ctx, id).catch(() => undefined);
  }
  const row = f;
  claim.start();
  try {
    await deps.recorder.act(
      {
        time: new Date(ctx.now()).toISOString(),
        type: 'freeze.expired',
        actor: 'console',
        app: row.app,
        cluster: row.cluster,
        env: row.env ?? row.doc.targets[0]?.env ?? null,
        data: {
          freezeId: id,
          expiresAt: row.expiresAt,
          ...(atStart ? { expiredWhileConsoleWasDown: true } : {}),
          liveChanges: 'Git wins: the controller reverts them',
        },
      },
      async () => finishFreeze(ctx, row, undefined, how, [], false, claim),
    );
  } catch (e) {
    if (e instanceof ClaimLostError || claim.lost) {
      deps.log?.error({ freeze: id }, 'freeze: an expiry lost its claim; the process that took it over finishes it');
      throw e;
    }
    // retried a minute later, by whichever replica's timer fires first (the retry time is the stored
    // expiry, so no replica retries at once): an expired freeze must not hold forever
    const retryAt = new Date(ctx.now() + 60_000).toISOString();
    await claim
      .transition('active', undefined, { expiresAt: retryAt })
      .catch((e2: unknown) =>
        deps.log?.error({ err: String(e2), freeze: id }, 'freeze: a failed expiry could not be undone'),
      );
    ctx.arm({ id, expiresAt: retryAt });
    throw e;
  } finally {
    claim.stop();
  }
}
