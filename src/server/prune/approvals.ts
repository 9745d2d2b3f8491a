// The second step of a prune: who may see a preview and who may decide on it (a reviewer who is not the
// requester; `needs-override` needs two approvers and the typed confirmation), voiding it when it expired or the
// live state moved, and the decision itself; an approval that completes the preview starts the execution.
import { can, whyNot } from '../../domain/access.ts';
import type { Principal } from '../auth/index.ts';
import { HttpError } from '../http/errors.ts';
import { mustPreview, type PruneContext } from './context.ts';
import { startExecution } from './executor.ts';
import { identityOf, samePerson } from './identity.ts';
import type { PreviewView, StoredPreview } from './model.ts';
import { snapshotMatches } from './snapshot.ts';
import type { PreviewStatus } from './store.ts';

/** Why this user may not approve this preview now (undefined: may). */
function whyNotApprove(p: StoredPreview, user: Principal): string | undefined {
  const role = whyNot(user.grants, 'prune.approve', { cluster: p.cluster, env: p.env });
  if (role) return role;
  if (samePerson(identityOf(user), p.requester)) return 'You requested this prune: a different person must approve it';
  if (p.decisions.some((d) => samePerson(d, identityOf(user)))) return 'You already decided on this prune';
  if (p.status !== 'pending') return `This prune is ${p.status}${p.statusReason ? `: ${p.statusReason}` : ''}`;
  if (Date.parse(p.expiresAt) <= Date.now()) return 'This preview expired: request a new one';
  return undefined;
}

/** One preview with its journal, as this user may see it (not found when they may not read the app). */
export async function viewPreview(ctx: PruneContext, id: string, user: Principal): Promise<PreviewView> {
  const preview = await mustPreview(ctx, id);
  if (!can(user.grants, 'app.read', { cluster: preview.cluster, env: preview.env }))
    throw new HttpError(404, 'NotFound', `no prune preview ${id}`);
  const reason = whyNotApprove(preview, user) ?? null;
  return { preview, journal: await ctx.deps.store.journal(id), viewer: { canApprove: !reason, reason } };
}

/** The previews this user may see (the reviewer queue: status pending). */
export async function listPreviews(
  ctx: PruneContext,
  user: Principal,
  status?: PreviewStatus,
): Promise<StoredPreview[]> {
  return (await ctx.deps.store.list(status)).filter((p) =>
    can(user.grants, 'app.read', { cluster: p.cluster, env: p.env }),
  );
}

async function voidPreview(ctx: PruneContext, p: StoredPreview, reason: string, actor: string): Promise<void> {
  const now = new Date().toISOString();
  if (await ctx.deps.store.transition(p.id, ['pending'], 'void', reason, now))
    await ctx.deps.recorder.record({
      time: now,
      type: 'prune.voided',
      actor,
      app: p.app,
      cluster: p.cluster,
      env: p.env,
      data: { previewId: p.id, snapshotHash: p.snapshotHash, reason },
    });
}

/**
 * An approval or a rejection by `user`. `onDenied` records a refusal (role, requester) as evidence.
 * Returns the preview as it is after the decision (an approval that completes it starts the execution).
 */
export async function decide(
  ctx: PruneContext,
  id: string,
  user: Principal,
  input: { decision: 'approve' | 'reject'; comment: string; confirmation?: string | undefined },
  onDenied: (reason: string, scope: { cluster: string; env: string; app: string }) => void,
): Promise<PreviewView> {
  const p = await mustPreview(ctx, id);
  const scope = { cluster: p.cluster, env: p.env, app: p.app };
  if (!can(user.grants, 'app.read', scope)) throw new HttpError(404, 'NotFound', `no prune preview ${id}`);
  const role = whyNot(user.grants, 'prune.approve', scope);
  if (role) {
    onDenied(role, scope);
    throw new HttpError(403, 'Forbidden', role);
  }
  const me = identityOf(user);
  if (samePerson(me, p.requester)) {
    const reason = 'the requester of a prune cannot approve or reject it: a different person must';
    onDenied(reason, scope);
    throw new HttpError(403, 'Forbidden', reason);
  }
  if (p.status !== 'pending')
    throw new HttpError(409, 'Conflict', `this prune is ${p.status}${p.statusReason ? `: ${p.statusReason}` : ''}`);
  if (Date.parse(p.expiresAt) <= Date.now()) {
    await voidPreview(ctx, p, 'the preview expired', user.name);
    throw new HttpError(409, 'Conflict', 'this preview expired: request a new one');
  }
  if (input.decision === 'approve') {
    if (p.doc.planState === 'needs-override' && input.confirmation !== p.doc.confirmation)
      throw new HttpError(400, 'BadRequest', `this prune needs an override: type "${p.doc.confirmation}" to confirm`);
    const snap = await snapshotMatches(ctx, p);
    if (!snap.ok) {
      await voidPreview(ctx, p, `the live state no longer matches the preview: ${snap.reason}`, user.name);
      throw new HttpError(409, 'Conflict', `approval void: ${snap.reason}; request a new preview`);
    }
  }
  const time = new Date().toISOString();
  const result = await ctx.deps.recorder.act(
    {
      time,
      type: input.decision === 'approve' ? 'prune.approved' : 'prune.rejected',
      actor: user.name,
      app: p.app,
      cluster: p.cluster,
      env: p.env,
      data: {
        previewId: p.id,
        snapshotHash: p.snapshotHash,
        approver: me,
        requester: p.requester,
        comment: input.comment,
        ...(p.doc.planState === 'needs-override' ? { override: true, reasons: p.doc.reasons } : {}),
      },
    },
    async (intent) => {
      const r = await ctx.deps.store.decide(id, {
        ...me,
        decision: input.decision,
        comment: input.comment,
        time,
        evidenceSeq: intent.seq,
      });
      if (!r.ok)
        throw new HttpError(
          409,
          'Conflict',
          r.reason === 'already-decided'
            ? 'you already decided on this prune'
            : `this prune is ${r.reason === 'not-pending' ? (r.status ?? 'decided') : 'gone'}`,
        );
      return r;
    },
    (o) => (o.ok ? { previewId: id, status: o.value.preview.status } : { previewId: id }),
  );
  if (result.preview.status === 'approved') await startExecution(ctx, id);
  return viewPreview(ctx, id, user);
}
