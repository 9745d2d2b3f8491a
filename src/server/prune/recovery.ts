// After a crash: executions left mid-way (this host's earlier process, or another replica whose journal went
// idle) are taken over and reported exactly from the journal and the live state; nothing is deleted again.
// Approved previews whose execution was never claimed (the request that gave the last approval stopped before
// its claim) are taken over the same way: the snapshot is checked again, then they are executed or voided.
import { hostname } from 'node:os';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import type { PruneContext } from './context.ts';
import { startExecution } from './executor.ts';
import type { StoredPreview } from './model.ts';
import { snapshotMatches, type SnapshotCheck } from './snapshot.ts';
import { carriesStamp } from './stamps.ts';
import { withdrawApprovals } from './approval-params.ts';

/** Whether a process of this host still runs (signal 0 only checks). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a preview left in `approved` or `executing` by `p.executor` is this process's to take over: that
 * process was an earlier one of this host (gone), or nothing happened to the preview for `staleExecutionMs`.
 */
function abandoned(ctx: PruneContext, p: StoredPreview, last: number): boolean {
  const [exHost, exPid] = (p.executor ?? '').split('/');
  const ownDead = `${exHost}/` === `${hostname()}/` && Number(exPid) !== process.pid && !alive(Number(exPid));
  return ownDead || Date.now() - last >= ctx.staleExecutionMs;
}

/**
 * At start (and periodically): approved previews whose execution nobody claimed — the process that gave the last
 * approval stopped before its claim (this host's earlier process at once; another replica's once the preview has
 * been approved for `staleExecutionMs`). The snapshot is checked again (and the preview's expiry): still the
 * same, the execution is resumed (`prune.resumed`, then the usual batches and `prune.executed`); changed or
 * expired, the approval is void (`prune.voided`, `recovered: true`). Returns the ids taken over.
 */
export async function recoverApprovals(ctx: PruneContext): Promise<string[]> {
  const { deps } = ctx;
  const taken: string[] = [];
  for (const p of await deps.store.list('approved', 1000)) {
    if (ctx.running.has(p.id) || !abandoned(ctx, p, Date.parse(p.updatedAt))) continue;
    // the app's source revision is part of the snapshot: while the cluster is not listed yet (a start) that is
    // unknown, and the preview waits for the next round; an app that is gone voids it
    if (!deps.listed(p.cluster)) continue;
    const base = { actor: 'console', app: p.app, cluster: p.cluster, env: p.env };
    const stranded = { previewId: p.id, snapshotHash: p.snapshotHash, approvedAt: p.updatedAt, recovered: true };
    const snap: SnapshotCheck =
      Date.parse(p.expiresAt) <= Date.now()
        ? { ok: false, reason: 'the preview expired before its execution started' }
        : !deps.app(p.app)
          ? { ok: false, reason: 'the app is gone' }
          : await snapshotMatches(ctx, p);
    const now = new Date().toISOString();
    if (!snap.ok) {
      const reason = `approved, but its execution never started and the live state no longer matches: ${snap.reason ?? 'changed'}`;
      if (await deps.store.transition(p.id, ['approved'], 'void', reason, now)) {
        taken.push(p.id);
        await deps.recorder.record({ ...base, time: now, type: 'prune.voided', data: { ...stranded, reason } });
      }
      continue;
    }
    // the intent first (fail closed: a store that cannot write leaves it approved for the next round)
    try {
      const claimed = await deps.recorder.act(
        {
          ...base,
          time: now,
          type: 'prune.resumed',
          data: {
            ...stranded,
            reason: 'approved, but its execution never started (the console stopped first); the snapshot still matches',
            ...(snap.recheck ? { recheckedAt: snap.recheck } : {}),
          },
        },
        async () => {
          await startExecution(ctx, p.id);
          // another replica may have claimed it meanwhile: then that one runs it
          return (await deps.store.get(p.id))?.executor === ctx.executor;
        },
        (o) => (o.ok ? { previewId: p.id, claimed: o.value } : { previewId: p.id }),
      );
      if (claimed) taken.push(p.id);
    } catch {
      // not resumed now (the outcome says why): still approved, tried again at the next round
    }
  }
  return taken;
}

/**
 * At start: executions that were interrupted (this host's earlier process, or a journal idle longer than
 * `staleExecutionMs`) are reported exactly: each object whose delete was in flight is read live (gone or
 * another uid: deleted; the same uid: not deleted); nothing is deleted again.
 */
export async function recoverExecutions(ctx: PruneContext): Promise<string[]> {
  const { deps } = ctx;
  const recovered: string[] = [];
  for (const p of await deps.store.list('executing', 1000)) {
    if (ctx.running.has(p.id)) continue;
    const journal = await deps.store.journal(p.id);
    const last = Math.max(Date.parse(p.updatedAt), ...journal.map((j) => Date.parse(j.updatedAt)));
    // this host's earlier process (gone) is recovered at once; another replica's only once its journal is stale
    if (!abandoned(ctx, p, last)) continue;
    const now = new Date().toISOString();
    let deleted = 0;
    const notDeleted: string[] = [];
    for (const j of journal) {
      if (j.state === 'deleted' || j.state === 'gone' || j.state === 'stamped') deleted++;
      if (j.state === 'planned') {
        await deps.store.mark(p.id, j.position, ['planned'], 'not-deleted', 'interrupted before its delete', now);
        notDeleted.push(j.object);
      }
      if (j.state !== 'deleting' && j.state !== 'stamping') continue;
      const c = p.doc.candidates.find((x) => x.id === j.object);
      let o: Obj | undefined;
      try {
        o = c ? await ctx.live.read(c.ref) : undefined;
      } catch {
        continue; // unknown: stays `deleting` and the preview stays failed-with-unknowns
      }
      if (j.state === 'stamping') {
        // the stamp is on the object (the controller prunes it), or it is not (nothing will delete it)
        const on = !!o && carriesStamp(o, p, j);
        if (on || !o) deleted++;
        else notDeleted.push(j.object);
        await deps.store.mark(
          p.id,
          j.position,
          ['stamping'],
          on ? 'stamped' : o ? 'not-deleted' : 'gone',
          on
            ? 'interrupted; found stamped at restart'
            : o
              ? 'interrupted; not stamped'
              : 'interrupted; gone at restart',
          now,
        );
        continue;
      }
      if (!o || metaOf(o).uid !== j.uid) {
        await deps.store.mark(p.id, j.position, ['deleting'], 'deleted', 'interrupted; found gone at restart', now);
        deleted++;
      } else {
        await deps.store.mark(p.id, j.position, ['deleting'], 'not-deleted', 'interrupted; still live at restart', now);
        notDeleted.push(j.object);
      }
    }
    const reason = `interrupted (the console stopped mid-prune): ${deleted} deleted, ${notDeleted.length} not deleted`;
    if (await deps.store.transition(p.id, ['executing'], 'failed', reason, now)) {
      recovered.push(p.id);
      // its approval-list entries go with it (a later sweep would too): a failed prune approves nothing more
      await withdrawApprovals(ctx, p, reason).catch(() => 0);
      await deps.recorder.record({
        time: now,
        type: 'prune.executed',
        actor: 'console',
        app: p.app,
        cluster: p.cluster,
        env: p.env,
        data: { previewId: p.id, status: 'failed', deleted, notDeleted, stoppedBecause: reason, recovered: true },
      });
    }
  }
  return recovered;
}

/** failed prunes whose unknown deletes are read again: those that failed within this long */
const SETTLE_WITHIN_MS = 7 * 86_400_000;

/**
 * Periodically: a delete the cluster never answered within the settle deadline left its journal row `deleting` in
 * a failed prune (executor.ts: what the journal could truthfully say then). Each such object is read again: gone,
 * another uid or being deleted → `deleted`; the same uid → `not-deleted`; still unreadable → left for the next
 * round. Each finding is recorded (`prune.settled`), once: the journal's transition is the guard. Returns how many
 * rows were settled.
 */
export async function settleUnknownDeletes(ctx: PruneContext, now = Date.now()): Promise<number> {
  const { deps } = ctx;
  let settled = 0;
  for (const p of await deps.store.list('failed', 1000)) {
    if (ctx.running.has(p.id) || now - Date.parse(p.updatedAt) > SETTLE_WITHIN_MS) continue;
    for (const j of await deps.store.journal(p.id)) {
      if (j.state !== 'deleting') continue;
      const c = p.doc.candidates.find((x) => x.id === j.object);
      if (!c) continue;
      let o: Obj | undefined;
      try {
        o = await ctx.live.read(c.ref);
      } catch {
        continue; // still unknown: the next round
      }
      const deleted = !o || metaOf(o).uid !== j.uid || !!metaOf(o).deletionTimestamp;
      const at = new Date(now).toISOString();
      const state = deleted ? 'deleted' : 'not-deleted';
      const why = deleted
        ? 'the cluster did not answer its delete; found deleted later'
        : 'the cluster did not answer its delete; found still live later';
      if (!(await deps.store.mark(p.id, j.position, ['deleting'], state, why, at))) continue;
      settled++;
      deps.recorder.observe({
        time: at,
        type: 'prune.settled',
        actor: 'console',
        app: p.app,
        cluster: p.cluster,
        env: p.env,
        data: { previewId: p.id, object: j.object, uid: j.uid, state, reason: why },
      });
    }
  }
  return settled;
}
