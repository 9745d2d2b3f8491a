// The first step of a prune: plan it (the controller's inventory, the candidates read live, what each deletion
// cascades to: domain/prune.ts) and store the plan as a preview, its request recorded first (fail closed).
import { randomUUID } from 'node:crypto';
import type { App } from '../../domain/app.ts';
import { lastWriter, metaOf, type Obj } from '../../domain/object-meta.ts';
import { planPrune, pruneKey, willDelete, type PruneCandidate } from '../../domain/prune.ts';
import { refId } from '../../domain/refs.ts';
import type { RenderResult } from '../diff/index.ts';
import { forgetRendered } from './approval-params.ts';
import { gatherCascades } from './cascades.ts';
import { pinnedVersion } from './version.ts';
import type { PruneContext } from './context.ts';
import { identityOf, type Principal } from '../auth/index.ts';
import type { PreviewCandidate, PreviewDoc } from './model.ts';
import { pruneCandidates, snapshotHash } from './snapshot.ts';
import type { PreviewStatus } from './store.ts';

/** A planned candidate as a preview stores it, with what its live object says (uid, pinned version, last writer). */
export function previewCandidate(c: PruneCandidate, o: Obj | undefined): PreviewCandidate {
  const m = o ? metaOf(o) : undefined;
  return {
    ref: c.ref,
    id: refId(c.ref),
    uid: m?.uid ?? null,
    resourceVersion: (o && pinnedVersion(o, c.ref)) ?? null,
    protectedBy: c.protectedBy,
    blockedBy: c.blockedBy,
    cascadesUnknown: c.cascadesUnknown,
    cascades: c.cascades,
    finalizers: c.finalizers,
    createdAt: m?.creationTimestamp ?? null,
    lastWriter: o ? (lastWriter(o) ?? null) : null,
    deletable: willDelete(c) && !!m?.uid && !!m.resourceVersion,
  };
}

/** What a reviewer types to confirm an override: "delete 1 object of web", "delete 3 objects of web". */
export const overrideConfirmation = (n: number, app: string) => `delete ${n} object${n === 1 ? '' : 's'} of ${app}`;

/** Plans a prune of the app now (no store, no evidence): what a preview stores. */
export async function planPreview(ctx: PruneContext, a: App, user: Principal): Promise<PreviewDoc> {
  const base = {
    controller: a.controller,
    limits: ctx.limits,
    propagationPolicy: ctx.propagation,
    batchSize: ctx.batchSize,
    confirmation: null,
    deletedBy: a.automation.prune ? ('controller' as const) : ('console' as const),
  };
  const unknown = (reason: string, render?: RenderResult): PreviewDoc => ({
    ...base,
    revision: render?.revision ?? a.source.revisionObserved ?? null,
    renderHash: render?.renderHash ?? null,
    renderer: render?.renderer ?? null,
    planState: 'unknown',
    reasons: [reason],
    candidates: [],
  });
  let render: RenderResult;
  try {
    render = await ctx.deps.render(a, user);
  } catch (e) {
    return unknown(`the render failed, so nothing can be planned: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!ctx.deps.listed(a.cluster))
    return unknown(
      `cluster ${a.cluster} is not fully listed (informers not synced): the live state is unknown`,
      render,
    );
  const { inventory, desired, candidates } = pruneCandidates(ctx, a, render);
  // an object in the render again (its removal was reverted in Git) loses any approval-list entry it had
  await forgetRendered(ctx, a.cluster, desired).catch(() => 0);
  const liveByKey = new Map<string, Obj>();
  try {
    for (const r of candidates) {
      const o = await ctx.live.get(r);
      if (o) liveByKey.set(pruneKey(r), o);
    }
  } catch (e) {
    return unknown(
      `reading the candidates live failed, so nothing can be planned: ${e instanceof Error ? e.message : String(e)}`,
      render,
    );
  }
  // what their deletion takes with it: owner-reference children, a Namespace's contents and a CRD's custom
  // resources listed live (metadata only), and which of those are unknown (a kind the console cannot list)
  const roots = [...liveByKey.values()];
  let cascades: Awaited<ReturnType<typeof gatherCascades>>;
  try {
    cascades = await gatherCascades(ctx, a.cluster, roots);
  } catch (e) {
    return unknown(
      `reading what the deletions would take with them failed, so nothing can be planned: ${e instanceof Error ? e.message : String(e)}`,
      render,
    );
  }
  const plan = planPrune({
    controller: a.controller,
    inventory,
    desired,
    live: [...roots, ...cascades.live],
    unknown: cascades.unknown,
    limits: ctx.limits,
  });
  const out: PreviewCandidate[] = plan.candidates.map((c) => previewCandidate(c, liveByKey.get(pruneKey(c.ref))));
  return {
    ...base,
    confirmation:
      plan.state === 'needs-override' ? overrideConfirmation(out.filter((c) => c.deletable).length, a.name) : null,
    revision: render.revision,
    renderHash: render.renderHash,
    renderer: render.renderer,
    planState: plan.state,
    reasons: plan.reasons,
    candidates: out,
  };
}

/** POST …/prune-previews: plans, records the request (fail closed) and stores the preview; returns its id. */
export async function requestPreview(
  ctx: PruneContext,
  a: App,
  user: Principal,
  planned?: PreviewDoc,
): Promise<string> {
  const doc = planned ?? (await planPreview(ctx, a, user));
  const now = new Date();
  const id = randomUUID();
  const open = doc.planState === 'ready' || doc.planState === 'needs-override';
  const status: PreviewStatus = open ? 'pending' : 'void';
  const hash = snapshotHash(doc.revision, doc.candidates);
  const requester = identityOf(user);
  await ctx.deps.recorder.act(
    {
      time: now.toISOString(),
      type: 'prune.requested',
      actor: user.name,
      app: a.id,
      cluster: a.cluster,
      env: a.env,
      data: {
        previewId: id,
        requester,
        revision: doc.revision,
        renderHash: doc.renderHash,
        snapshotHash: hash,
        ...(doc.appSet ? { applicationSet: `${doc.appSet.namespace}/${doc.appSet.name}` } : {}),
        plan: doc.planState,
        reasons: doc.reasons,
        candidates: doc.candidates.map((c) => ({
          object: c.id,
          uid: c.uid,
          resourceVersion: c.resourceVersion,
          protectedBy: c.protectedBy,
          blockedBy: c.blockedBy ?? null,
          cascadesUnknown: c.cascadesUnknown ?? null,
          cascades: c.cascades.length,
        })),
      },
    },
    () =>
      ctx.deps.store.create({
        id,
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        status,
        statusReason: open
          ? null
          : doc.planState === 'nothing'
            ? 'nothing will be deleted'
            : 'the plan is unknown: nothing can be approved',
        snapshotHash: hash,
        requiredApprovals: doc.planState === 'needs-override' ? 2 : 1,
        requester,
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + ctx.ttlMs).toISOString(),
        doc,
      }),
    () => ({ previewId: id, status }),
  );
  return id;
}
