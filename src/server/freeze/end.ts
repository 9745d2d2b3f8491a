// Ending a freeze by hand: the decisions checked, the end claimed (claim.ts) with its decisions and each app's
// write-back as decided (recorded with the claim, so a takeover of a dead end redoes exactly these), each change
// chosen for it written back to Git (a branch or pull request per app, with evidence, its outcome recorded before
// anything else happens), then the prior automation restored (restore.ts). An end that stalled (a takeover could
// not complete its write-back) is ended again the same way.
import type { LiveChange } from '../../domain/freeze.ts';
import { canonicalJson } from '../../domain/evidence.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import { HttpError } from '../http/errors.ts';
import { ClaimLostError, EndClaim, isStalled, RESTORE_RETRY_MS } from './claim.ts';
import { freezeChanges, mustMay, viewFreeze } from './read.ts';
import { finishFreeze } from './restore.ts';
import { refuseFreeze } from './refusal.ts';
import type { FreezeDoc, FreezeRow, FreezeStatus, PlannedWriteBack } from './store.ts';
import type { AppChange, EndDecision, EndProgress, FreezeActor, FreezeContext, FreezeView } from './types.ts';

/** What a freeze shows when a takeover could not complete the write-back. */
export const STALLED_TEXT = 'end stalled: write-back could not be completed, automation NOT restored';

/** Ends a freeze: each listed change written back to Git or left to Git, then the prior automation restored. */
export async function endFreeze(
  ctx: FreezeContext,
  id: string,
  user: FreezeActor,
  decisions: EndDecision[],
): Promise<FreezeView> {
  const { deps } = ctx;
  const f = await viewFreeze(ctx, id);
  mustMay(user, f);
  const stalled = isStalled(f);
  // refused before anything is written or recorded as intended: one action.refused record (refusal.ts)
  const refuse = (reason: string) =>
    refuseFreeze(ctx, user, {
      action: 'freeze.ended',
      cluster: f.cluster,
      env: f.env ?? f.doc.targets[0]?.env ?? null,
      app: f.app,
      reason,
      data: { freezeId: id },
    });
  if (f.status !== 'active' && !stalled)
    return refuse(f.status === 'ending' ? `freeze ${id} is already ending` : `freeze ${id} is ${f.status}`);
  const seen = new Set<string>();
  for (const d of decisions) {
    if (seen.has(d.change)) throw new HttpError(400, 'BadRequest', `decisions: ${d.change} is named twice`);
    seen.add(d.change);
  }
  const wanted = decisions.filter((d) => d.action === 'write-back');
  let changes: AppChange[] = [];
  if (wanted.length) {
    const c = await freezeChanges(ctx, id);
    changes = c.changes;
    const unknownIds = wanted.filter((d) => !changes.some((x) => x.id === d.change)).map((d) => d.change);
    if (unknownIds.length)
      throw new HttpError(
        400,
        'BadRequest',
        `decisions: no live change ${unknownIds.join(', ')} (the list changed? reload it)`,
      );
    if (!deps.writeBack) throw new HttpError(501, 'NotImplemented', 'write-back to Git is not configured');
  }
  const attempt = (f.doc.ending?.attempt ?? 0) + 1;
  const plan = planWriteBacks(ctx, f, user.name, wanted, changes, attempt);
  const at = new Date(ctx.now()).toISOString();
  const claim = new EndClaim(ctx, id);
  const row = await takeEnd(ctx, id, f.status, claim, (r) => ({
    ...r.doc,
    decisions,
    stall: undefined,
    ending: { attempt, how: 'unfrozen', by: user.name, at, writeBack: plan },
  }));
  if (!row) return refuse(`freeze ${id} is already ending`);
  claim.start();
  const progress: EndProgress = { written: [], restored: [] };
  let outcome: Error | undefined;
  /** after a failure: the freeze back as it was (under the claim), and what to tell the user, truthfully */
  const settle = async (e: unknown): Promise<Error> => {
    if (outcome) return outcome;
    if (e instanceof ClaimLostError || claim.lost) return (outcome = takenOver(id, claim, e, progress));
    const reason = e instanceof Error ? e.message : String(e);
    try {
      if (!stalled) await claim.transition('active');
      // the write-back done but a restore failed: left unclaimed, retried by any replica (takeover.ts)
      else if (e instanceof HttpError && e.code === 'RestoreFailed')
        await claim.modify((r) => ({
          doc: { ...r.doc, stall: undefined },
          claim: { by: ctx.replica, token: null, until: new Date(ctx.now() + RESTORE_RETRY_MS).toISOString() },
        }));
      else
        await claim.modify((r) => ({
          doc: { ...r.doc, stall: { at: new Date(ctx.now()).toISOString(), by: user.name, reason } },
          endReason: `${STALLED_TEXT} (${reason})`,
          claim: { by: ctx.replica, token: null, until: null },
        }));
    } catch (e2) {
      if (e2 instanceof ClaimLostError) return (outcome = takenOver(id, claim, e2, progress));
      deps.log?.error({ err: String(e2), freeze: id }, 'freeze: a failed end could not be undone');
    }
    // the claim was held until now: nothing was restored by anyone (the restore comes after every write-back)
    outcome =
      e instanceof HttpError && e.code === 'WriteBackFailed'
        ? new HttpError(
            502,
            'WriteBackFailed',
            `writing back to Git failed, nothing was restored (${stalled ? 'the end stays stalled, automation NOT restored' : 'the freeze holds'}): ${reason}`,
          )
        : e instanceof Error
          ? e
          : new Error(reason);
    return outcome;
  };
  try {
    await deps.recorder.act(
      {
        time: new Date(ctx.now()).toISOString(),
        type: 'freeze.ended',
        actor: user.name,
        app: f.app,
        cluster: f.cluster,
        env: f.env ?? f.doc.targets[0]?.env ?? null,
        data: { freezeId: id, how: 'unfrozen', decisions, ...(attempt > 1 ? { attempt } : {}) },
      },
      async () => {
        try {
          const doc = await runWriteBacks(ctx, row, claim, user.name, progress);
          await finishFreeze(ctx, { ...row, doc }, user, 'unfrozen', decisions, false, claim, progress);
        } catch (e) {
          throw await settle(e);
        }
      },
    );
  } catch (e) {
    throw await settle(e);
  } finally {
    claim.stop();
  }
  ctx.disarm(id);
  return viewFreeze(ctx, id);
}

/**
 * The end claimed: `from` → `ending` with this process's claim and `doc` (computed from the row as stored), by
 * compare-and-set on the row's version (an extension or an out-of-band record written meanwhile: read again).
 * Undefined when the freeze is no longer in `from` (or, ending, no longer stalled).
 */
export async function takeEnd(
  ctx: FreezeContext,
  id: string,
  from: FreezeStatus,
  claim: EndClaim,
  doc: (row: FreezeRow) => FreezeDoc,
): Promise<FreezeRow | undefined> {
  for (let i = 0; i < 10; i++) {
    const r = await ctx.deps.store.get(id);
    if (!r || r.status !== from || (from === 'ending' && !isStalled(r))) return undefined;
    if (await ctx.deps.store.claimEnd(id, from, r, claim.fresh(), doc(structuredClone(r))))
      return ctx.deps.store.get(id);
  }
  return undefined;
}

/** Each app's write-back as decided: its branch (suffixed after a first attempt), commit message and changes. */
function planWriteBacks(
  ctx: FreezeContext,
  f: FreezeRow,
  actor: string,
  wanted: EndDecision[],
  changes: AppChange[],
  attempt: number,
): PlannedWriteBack[] {
  const byApp = new Map<string, LiveChange[]>();
  for (const d of wanted) {
    const c = changes.find((x) => x.id === d.change) as AppChange;
    const { appId, ...change } = c;
    byApp.set(appId, [...(byApp.get(appId) ?? []), change]);
  }
  return [...byApp].map(([appId, list]) => {
    const a = ctx.deps.apps.get(appId);
    if (!a) throw new HttpError(409, 'Conflict', `${appId} is gone: nothing can be written back for it`);
    const branch = `freeze/${f.id}${byApp.size > 1 ? `-${a.name}` : ''}${attempt > 1 ? `-${attempt}` : ''}`;
    const message = [
      `Write back live changes of freeze ${f.id} (${a.name}, ${a.env})`,
      '',
      `Reason: ${f.reason}`,
      ...(f.incident ? [`Incident: ${f.incident}`] : []),
      '',
      ...list.map(
        (c) =>
          `- ${c.ref.kind}/${c.ref.name} ${c.path}: ${JSON.stringify(c.git)} -> ${JSON.stringify(c.live)} (by ${c.manager})`,
      ),
      '',
      `Freeze-Id: ${f.id}`,
      `Written-Back-By: ${actor}`,
    ].join('\n');
    return { appId, branch, message, author: actor, changes: list };
  });
}

/**
 * The end's write-backs not done yet (an app whose outcome is recorded is skipped), one app at a time: the claim
 * renewed first, the intent recorded, Git written, the outcome recorded on the freeze under the claim. Throws at
 * the first that fails (WriteBackFailed), before anything is restored. `takenOver`: a takeover redoing them.
 */
export async function runWriteBacks(
  ctx: FreezeContext,
  row: FreezeRow,
  claim: EndClaim,
  actor: string,
  progress: EndProgress,
  takenOver?: { from: string | null },
): Promise<FreezeDoc> {
  const { deps } = ctx;
  let doc = row.doc;
  for (const p of row.doc.ending?.writeBack ?? []) {
    if (doc.writeBack?.some((w) => w.appId === p.appId && w.branch === p.branch)) continue;
    const a = deps.apps.get(p.appId);
    if (!a) throw new HttpError(409, 'Conflict', `${p.appId} is gone: nothing can be written back for it`);
    // an earlier attempt of this end (its restore failed, say) wrote back exactly these changes: its pull request
    // stands, and a retry does not open a second one (the chaos matrix's `freeze-end × apiserver-crash`)
    // (one whose pull request the forge did not open is written back again: the retry opens it)
    const earlier = doc.writeBack?.find(
      (w) => w.appId === p.appId && w.commit && (w.pullRequest || !w.forgeError) && sameChanges(w.written, p.changes),
    );
    if (earlier) {
      progress.written.push(
        `${a.name} (already written back: ${earlier.pullRequest ? `pull request ${earlier.pullRequest.url}` : `branch ${earlier.branch}`})`,
      );
      continue;
    }
    const writeBack = deps.writeBack;
    if (!writeBack) throw new HttpError(501, 'NotImplemented', 'write-back to Git is not configured');
    await claim.confirm();
    const message = takenOver
      ? `${p.message}\nCompleted-By: gitops-console (${ctx.replica}: the process ending the freeze stopped)`
      : p.message;
    const out = await deps.recorder.act(
      {
        time: new Date(ctx.now()).toISOString(),
        type: 'freeze.write-back',
        actor,
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        data: {
          freezeId: row.id,
          branch: p.branch,
          repo: withoutUserInfo(a.source.url) ?? null,
          path: a.source.path ?? null,
          changes: p.changes.map((c) => ({ change: c.id, path: c.path, git: c.git, live: c.live, manager: c.manager })),
          ...(takenOver ? { redo: true, onBehalfOf: p.author, takenOverFrom: takenOver.from } : {}),
        },
      },
      async () => {
        try {
          // not past the claim: a write-back still waiting on Git when the claim cannot be renewed for half its
          // time is left (its branch is this attempt's; a takeover redoes it), never outlives the claim (issue 40)
          return await claim.whileHeld(
            writeBack(a, { branch: p.branch, message, author: p.author, changes: p.changes }),
          );
        } catch (e) {
          if (e instanceof ClaimLostError) throw e;
          throw new HttpError(
            502,
            'WriteBackFailed',
            `writing back ${a.name} to Git failed: ${e instanceof Error ? e.message : String(e)}`,
          );
        }
      },
      (o) =>
        o.ok
          ? {
              branch: o.value.branch,
              commit: o.value.commit,
              pullRequest: o.value.pullRequest ?? null,
              placements: o.value.placements,
              ...(o.value.forgeError ? { forgeError: o.value.forgeError } : {}),
            }
          : {},
    );
    progress.written.push(
      `${a.name} (${out.pullRequest ? `pull request ${out.pullRequest.url}` : out.commit ? `branch ${out.branch} at ${out.commit.slice(0, 12)}` : 'nothing could be placed'})`,
    );
    const entry = { appId: p.appId, ...out, written: p.changes.map((c) => ({ id: c.id, live: c.live })) };
    doc = (await claim.modify((r) => ({ doc: { ...r.doc, writeBack: [...(r.doc.writeBack ?? []), entry] } }))).doc;
  }
  return doc;
}

/** Whether an earlier write-back carried exactly these changes, each with the same live value. */
function sameChanges(written: Array<{ id: string; live: unknown }> | undefined, changes: LiveChange[]): boolean {
  if (!written || written.length !== changes.length) return false;
  const key = (id: string, live: unknown) => `${id}=${canonicalJson(live)}`;
  const had = new Set(written.map((w) => key(w.id, w.live)));
  return changes.every((c) => had.has(key(c.id, c.live)));
}

/** What an end that lost its claim tells its user: who took it over, and exactly what this request did. */
export function takenOver(id: string, claim: EndClaim, e: unknown, progress: EndProgress): HttpError {
  const by = e instanceof ClaimLostError ? e.takenBy : null;
  const unrenewed = e instanceof ClaimLostError && e.unrenewed;
  return new HttpError(
    unrenewed ? 503 : 409,
    unrenewed ? 'EndClaimUnrenewed' : 'EndTakenOver',
    `${unrenewed ? `this request could not renew its claim of the end of freeze ${id} for over half its time (the store did not answer), so it stopped before another console process may take the end over` : `this request lost the claim of the end of freeze ${id} (its process could not renew it in time) and ${by ? `${by} took the end over` : 'another console process took the end over'}`}; this request stopped there. Written back by this request: ${progress.written.length ? progress.written.join('; ') : unrenewed ? 'nothing confirmed (a write-back it left waiting on Git may still land on its branch; the process that takes the end over redoes it)' : 'nothing'}. Automation restored by this request: ${progress.restored.length ? progress.restored.join(', ') : 'none'}. The freeze shows how its end finished.`,
  );
}
