// After a crash: executions left mid-way (this host's earlier process, or another replica whose journal went
// idle) are taken over and reported exactly from the journal and the live state; nothing is deleted again.
import { hostname } from 'node:os';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import type { PruneContext } from './context.ts';
import { carriesStamp } from './stamps.ts';

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
 * At start: executions that were interrupted (this host's earlier process, or a journal idle longer than
 * `staleExecutionMs`) are reported exactly: each object whose delete was in flight is read live (gone or
 * another uid: deleted; the same uid: not deleted); nothing is deleted again.
 */
export async function recoverExecutions(ctx: PruneContext): Promise<string[]> {
  const { deps } = ctx;
  const recovered: string[] = [];
  const host = `${hostname()}/`;
  const staleMs = ctx.staleExecutionMs;
  for (const p of await deps.store.list('executing', 1000)) {
    if (ctx.running.has(p.id)) continue;
    const journal = await deps.store.journal(p.id);
    const last = Math.max(Date.parse(p.updatedAt), ...journal.map((j) => Date.parse(j.updatedAt)));
    // this host's earlier process (gone) is recovered at once; another replica's only once its journal is stale
    const [exHost, exPid] = (p.executor ?? '').split('/');
    const ownDead = `${exHost}/` === host && Number(exPid) !== process.pid && !alive(Number(exPid));
    if (!ownDead && Date.now() - last < staleMs) continue;
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
