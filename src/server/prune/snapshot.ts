// A preview's snapshot: the hash the plan stores over the revision and each candidate's uid and
// resourceVersion, and the check at approval that the candidates still are what the preview saw — and that what
// their deletion takes with it has not since come to hold a protected object, become unknown, or (in a plan that
// was within the limits) grown past the count limit: a Namespace's resourceVersion does not move when an object
// is added to it, so its contents are read again.
// A newer source revision (in a monorepo, anyone's commit) voids nothing by itself: the app is rendered again at
// it, and the approval stands when the candidates are exactly what that render leaves out of the controller's
// inventory, as at the preview (the re-check is returned, and the approval's record carries it). A candidate in the
// render again, an object newly out of it, or a render that fails voids it.
import { createHash } from 'node:crypto';
import type { App } from '../../domain/app.ts';
import { isHook } from '../../domain/argo-hooks.ts';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import { deletionCount, judgeCascade, lookupsOver, pruneKey, type PruneCandidate } from '../../domain/prune.ts';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import { refOf } from '../../domain/tree.ts';
import type { Principal } from '../auth/index.ts';
import type { RenderResult } from '../diff/index.ts';
import { trackerOf } from '../tree/index.ts';
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

/**
 * What a prune of the app would consider at this render: the controller's inventory plus the live objects carrying
 * its tracking labels (in its own environment's namespaces, when a mapping says) that the inventory dropped (a Flux Kustomization with `prune: false` drops stale objects from
 * its inventory but leaves them live) less an Argo CD app's live hooks, the render's objects, and the candidates (in
 * the inventory, not rendered).
 */
export function pruneCandidates(
  ctx: PruneContext,
  a: App,
  render: RenderResult,
): { inventory: ObjectRef[]; desired: ObjectRef[]; candidates: ObjectRef[] } {
  const inventory = new Map<string, ObjectRef>();
  for (const r of a.inventory) inventory.set(pruneKey(r), r);
  // an object tied to the app by its tracking label alone, in a namespace the mapping gives another environment, is
  // not this app's to prune: anyone who may label there could add it, and this app's reviewers may not even see it
  const elsewhere = (r: ObjectRef) => {
    const env = r.namespace ? ctx.deps.envOfNamespace?.(a.cluster, r.namespace) : undefined;
    return env !== undefined && env !== a.env;
  };
  for (const o of ctx.deps.index.trackedBy(a.cluster, trackerOf(a))) {
    const r = refOf(a.cluster, o);
    if (!inventory.has(pruneKey(r)) && !elsewhere(r)) inventory.set(pruneKey(r), r);
  }
  const desired: ObjectRef[] = render.objects.map((o) => refOf(a.cluster, o));
  const desiredKeys = new Set(desired.map(pruneKey));
  // a live Argo CD hook is not the app's to prune: Argo CD never prunes a hook (its delete policy removes it), as the
  // diff says (diff/hook-rows.ts leftHookNote). Flux has no hooks: there an annotated object is pruned as any other.
  const hook = (r: ObjectRef) =>
    a.controller === 'argocd' && isHook(ctx.deps.index.get(a.cluster, r) as Obj | undefined);
  const all = [...inventory.values()].filter((r) => !hook(r));
  return { inventory: all, desired, candidates: all.filter((r) => !desiredKeys.has(pruneKey(r))) };
}

export interface SnapshotCheck {
  ok: boolean;
  reason?: string;
  /** the source had moved: the render at this revision leaves the same candidates */
  recheck?: { revision: string; renderHash: string };
}

/**
 * Whether the candidates still are what the preview saw (the same uid and resourceVersion, read live now), and,
 * when the app's source moved, whether its render there still leaves exactly them. `user`: whom the render goes out
 * as (the approver; the console itself in recovery).
 */
export async function snapshotMatches(ctx: PruneContext, p: StoredPreview, user?: Principal): Promise<SnapshotCheck> {
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
  // Flux renders the source artifact: at a newer artifact, the render decides again
  const a = ctx.deps.app(p.app);
  if (
    a?.controller === 'flux' &&
    p.doc.revision &&
    a.source.revisionWanted &&
    a.source.revisionWanted !== p.doc.revision
  )
    return renderStillLeavesThem(ctx, p, a, user);
  return { ok: true };
}

/** The app rendered at its new source revision: the approval stands when the candidates are the preview's. */
async function renderStillLeavesThem(
  ctx: PruneContext,
  p: StoredPreview,
  a: App,
  user: Principal | undefined,
): Promise<SnapshotCheck> {
  const moved = `the app's source moved to ${a.source.revisionWanted} since the preview`;
  let render: RenderResult;
  try {
    render = await ctx.deps.render(a, user);
  } catch (e) {
    return { ok: false, reason: `${moved}, and rendering it failed: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (render.revision === p.doc.revision) return { ok: true };
  const now = new Map(pruneCandidates(ctx, a, render).candidates.map((r) => [pruneKey(r), r]));
  const before = new Map(p.doc.candidates.map((c) => [pruneKey(c.ref), c.id]));
  const rendered = [...before].filter(([k]) => !now.has(k)).map(([, id]) => id);
  const added = [...now].filter(([k]) => !before.has(k)).map(([, r]) => refId(r));
  if (rendered.length || added.length) {
    const said = [
      rendered.length ? `${rendered.join(', ')} in the render again` : '',
      added.length ? `${added.join(', ')} newly out of it` : '',
    ].filter(Boolean);
    return { ok: false, reason: `${moved}, and its render there changes what would be deleted: ${said.join('; ')}` };
  }
  return { ok: true, recheck: { revision: render.revision, renderHash: render.renderHash } };
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
