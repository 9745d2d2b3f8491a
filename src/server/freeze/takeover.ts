// Ends whose process died (a crash, a SIGKILL, a Pod evicted mid-end), found by every replica's watch (service.ts)
// and taken over by one: an end is taken only once its claim is dead (claim.ts claimIsDead: not renewed for a
// whole claim time as this process watched it, and past its expiry), by compare-and-set on the claim seen, so a
// live end — however slow its Git — is never taken. The taker then, under its own claim:
//   1. records the takeover (`freeze.ended`, takenOver, naming the dead process and the write-backs to redo);
//   2. redoes the recorded write-backs not done yet — exactly as decided (branch, message, author, values), each
//      with its evidence and its outcome recorded on the freeze;
//   3. only then restores the prior automation (restore.ts).
// When the write-back cannot be completed (Git down, the branch already there, the app gone, decisions recorded
// without their values by an older console), it restores nothing: the end stalls — evidence (`action.failed` of the
// takeover, stalled), the freeze's end reason says "end stalled: write-back could not be completed, automation NOT
// restored", the claim is released and no replica takes it again: on-call ends it again (end.ts). A restore that
// fails is left unclaimed and retried by any replica after RESTORE_RETRY_MS.
import { HttpError } from '../http/errors.ts';
import { ClaimLostError, claimIsDead, EndClaim, isStalled, RESTORE_RETRY_MS } from './claim.ts';
import { runWriteBacks, STALLED_TEXT } from './end.ts';
import { finishFreeze } from './restore.ts';
import type { FreezeRow } from './store.ts';
import type { EndProgress, FreezeContext } from './types.ts';

/** Every end in progress watched; those whose claim died are taken over (one at a time). */
export async function takeOverDeadEnds(ctx: FreezeContext): Promise<void> {
  const rows = await ctx.deps.store.list({ active: true });
  const ending = new Set(rows.filter((r) => r.status === 'ending').map((r) => r.id));
  for (const id of [...ctx.watched.keys()]) if (!ending.has(id)) ctx.watched.delete(id);
  for (const f of rows) if (f.status === 'ending') await takeOverIfDead(ctx, f);
}

async function takeOverIfDead(ctx: FreezeContext, f: FreezeRow): Promise<void> {
  if (ctx.holding.has(f.id) || ctx.resuming.has(f.id) || isStalled(f)) return;
  if (!claimIsDead(ctx, f)) return;
  const claim = new EndClaim(ctx, f.id);
  // the claim exactly as seen dead: a renewal (or another taker) in between and this does nothing
  if (!(await ctx.deps.store.claimEnd(f.id, 'ending', f, claim.fresh()))) return;
  ctx.watched.delete(f.id);
  ctx.resuming.add(f.id);
  claim.start();
  try {
    await ctx.track(finishDeadEnd(ctx, f, claim));
  } catch (e) {
    ctx.deps.log?.error({ err: String(e), freeze: f.id }, 'freeze: taking over an end did not finish it');
  } finally {
    claim.stop();
    ctx.resuming.delete(f.id);
  }
}

async function finishDeadEnd(ctx: FreezeContext, dead: FreezeRow, claim: EndClaim): Promise<void> {
  const { deps } = ctx;
  const row = (await deps.store.get(dead.id)) ?? dead;
  const decisions = row.doc.decisions ?? [];
  const ending = row.doc.ending;
  const how = ending?.how ?? (decisions.length ? 'unfrozen' : 'expired');
  const from = dead.claimedBy ?? null;
  const done = (appId: string, branch: string) =>
    row.doc.writeBack?.some((w) => w.appId === appId && w.branch === branch) ?? false;
  const pending = (ending?.writeBack ?? []).filter((p) => !done(p.appId, p.branch));
  const progress: EndProgress = { written: [], restored: [] };
  await deps.recorder.act(
    {
      time: new Date(ctx.now()).toISOString(),
      type: 'freeze.ended',
      actor: 'console',
      app: row.app,
      cluster: row.cluster,
      env: row.env ?? row.doc.targets[0]?.env ?? null,
      data: {
        freezeId: row.id,
        how,
        decisions,
        takenOver: true,
        takenOverFrom: from,
        redo: pending.map((p) => p.branch),
        resumedAfterRestart: true,
      },
    },
    async () => {
      let doc = row.doc;
      if (!ending && decisions.some((d) => d.action === 'write-back'))
        await stall(ctx, claim, 'its decisions were recorded without the values to write back (an older console)');
      if (pending.length)
        try {
          doc = await runWriteBacks(ctx, row, claim, 'console', progress, { from });
        } catch (e) {
          if (e instanceof ClaimLostError) throw e;
          await stall(ctx, claim, e instanceof Error ? e.message : String(e));
        }
      try {
        await finishFreeze(
          ctx,
          { ...row, doc },
          undefined,
          `${how} (finished after the process ending it stopped)`,
          decisions,
          true,
          claim,
          progress,
        );
      } catch (e) {
        if (e instanceof ClaimLostError) throw e;
        // the end left unclaimed until a retry time: any replica takes it over again then
        const until = new Date(ctx.now() + RESTORE_RETRY_MS).toISOString();
        await claim.modify((r) => ({ doc: r.doc, claim: { by: ctx.replica, token: null, until } }));
        throw e;
      }
    },
    (o) =>
      o.ok
        ? { redone: progress.written, restored: progress.restored }
        : {
            redone: progress.written,
            ...(o.error instanceof HttpError && o.error.code === 'EndStalled' ? { stalled: true } : {}),
          },
  );
}

/** The takeover cannot complete the write-back: nothing restored, the end waits for on-call. Always throws. */
async function stall(ctx: FreezeContext, claim: EndClaim, reason: string): Promise<never> {
  const text = `${STALLED_TEXT} (${reason})`;
  await claim.modify((r) => ({
    doc: { ...r.doc, stall: { at: new Date(ctx.now()).toISOString(), by: ctx.replica, reason } },
    endReason: text,
    claim: { by: ctx.replica, token: null, until: null },
  }));
  ctx.deps.log?.error({ freeze: claim.id, reason }, `freeze: ${STALLED_TEXT}`);
  throw new HttpError(
    502,
    'EndStalled',
    `${text}. The apps stay frozen: end the freeze again once Git answers (its write-back goes to a new branch)`,
  );
}
