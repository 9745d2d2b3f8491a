// A preview's snapshot: the hash the plan stores over the revision and each candidate's uid and
// resourceVersion, and the check at approval that the candidates still are what the preview saw.
import { createHash } from 'node:crypto';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import type { PruneContext } from './context.ts';
import type { PreviewCandidate, StoredPreview } from './model.ts';

export function snapshotHash(revision: string | null, candidates: PreviewCandidate[]): string {
  const lines = candidates
    .map((c) => `${c.id} ${c.uid ?? '-'} ${c.resourceVersion ?? '-'}`)
    .sort()
    .join('\n');
  return createHash('sha256')
    .update(`${revision ?? 'unknown'}\n${lines}`)
    .digest('hex');
}

/** Whether the candidates still are what the preview saw (the same uid and resourceVersion, read live now). */
export async function snapshotMatches(ctx: PruneContext, p: StoredPreview): Promise<{ ok: boolean; reason?: string }> {
  for (const c of p.doc.candidates) {
    if (!c.deletable) continue;
    let o: Obj | undefined;
    try {
      o = await ctx.live.read(c.ref);
    } catch (e) {
      return { ok: false, reason: `cannot read ${c.id}: ${e instanceof Error ? e.message : String(e)}` };
    }
    const m = o ? metaOf(o) : undefined;
    if (!m) return { ok: false, reason: `${c.id} no longer exists` };
    if (m.uid !== c.uid || m.resourceVersion !== c.resourceVersion)
      return { ok: false, reason: `${c.id} changed since the preview (uid/resourceVersion)` };
  }
  // Flux renders the source artifact: a newer artifact is another snapshot
  const a = ctx.deps.app(p.app);
  if (
    a?.controller === 'flux' &&
    p.doc.revision &&
    a.source.revisionWanted &&
    a.source.revisionWanted !== p.doc.revision
  )
    return { ok: false, reason: `the app's source moved to ${a.source.revisionWanted} since the preview` };
  return { ok: true };
}
