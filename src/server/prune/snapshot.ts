// A preview's snapshot: the hash the plan stores over the revision and each candidate's uid and
// resourceVersion, and the check at approval that the candidates still are what the preview saw — and that what
// their deletion takes with it has not since come to hold a protected object, become unknown, or (in a plan that
// was within the limits) grown past the count limit: a Namespace's resourceVersion does not move when an object
// is added to it, so its contents are read again.
import { createHash } from 'node:crypto';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import { deletionCount, judgeCascade, lookupsOver, type PruneCandidate } from '../../domain/prune.ts';
import { gatherCascades } from './cascades.ts';
import { pinnedVersion } from './version.ts';
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
  const roots: Array<{ c: PreviewCandidate; o: Obj }> = [];
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
    if (m.uid !== c.uid || (o && pinnedVersion(o, c.ref)) !== c.resourceVersion)
      return { ok: false, reason: `${c.id} changed since the preview (uid/resourceVersion)` };
    if (o) roots.push({ c, o });
  }
  const cascades = await cascadesStillMatch(ctx, p, roots);
  if (!cascades.ok) return cascades;
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

/** What the deletable candidates take with them, judged again now (domain/prune.ts judgeCascade). */
async function cascadesStillMatch(
  ctx: PruneContext,
  p: StoredPreview,
  roots: Array<{ c: PreviewCandidate; o: Obj }>,
): Promise<{ ok: boolean; reason?: string }> {
  if (!roots.length) return { ok: true };
  let gathered: Awaited<ReturnType<typeof gatherCascades>>;
  try {
    gathered = await gatherCascades(
      ctx,
      p.cluster,
      roots.map((r) => r.o),
    );
  } catch (e) {
    return {
      ok: false,
      reason: `cannot read what the deletions take with them: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  const lookups = lookupsOver([...roots.map((r) => r.o), ...gathered.live], gathered.unknown);
  const now: PruneCandidate[] = [];
  for (const { c, o } of roots) {
    const j = judgeCascade(o, lookups, c.ref.cluster);
    if (j.blockedBy) return { ok: false, reason: `${c.id} would now take a protected object with it: ${j.blockedBy}` };
    if (j.unknown) return { ok: false, reason: `what deleting ${c.id} takes with it is unknown now: ${j.unknown}` };
    now.push({
      ref: c.ref,
      protectedBy: null,
      blockedBy: null,
      cascadesUnknown: null,
      cascades: j.cascades,
      finalizers: [],
    });
  }
  const count = deletionCount(now);
  if (p.doc.planState === 'ready' && count > p.doc.limits.maxDeletions)
    return {
      ok: false,
      reason: `the deletions would now remove ${count} objects (with what they take with them), over the limit of ${p.doc.limits.maxDeletions}`,
    };
  return { ok: true };
}
