// The second step of a prune: who may see a preview and who may decide on it (a reviewer who is not the
// requester; `needs-override` needs two approvers and the typed confirmation), voiding it when it expired or the
// live state moved, and the decision itself; an approval that completes the preview starts the execution.
// "Not the same person" compares people (identity.ts), never names. Intent only for what may happen: every check
// that needs no write (role, same person, already decided, state, expiry, snapshot) runs first, and a refusal is
// one `action.refused` record (or `access.denied` for the role and the requester), never a `prune.approved`; then
// the store holds the decision (the same checks, in one transaction with every other decider), the intent is
// recorded, and the decision is recorded in one transaction with its checks (a lost race there is `action.failed`).
// In impersonation mode a preview (planned with the console's identity) is shown as the reader's Kubernetes RBAC
// lets it be seen (previewSeenBy), and only a reviewer who can see all of it may approve it (mustSeeAllToApprove).
import { can, whyNot } from '../../domain/access.ts';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import { HttpError, storeUnreachable } from '../http/errors.ts';
import { mustPreview, type PruneContext } from './context.ts';
import { startExecution } from './executor.ts';
import { identityOf, samePerson, type Principal } from '../auth/index.ts';
import { handoverOf } from './handover.ts';
import type { PreviewView, StoredPreview } from './model.ts';
import { snapshotMatches, type SnapshotCheck } from './snapshot.ts';
import { voidPendingPreview } from './void-preview.ts';
import type { DecideRefusal, PreviewStatus } from './store.ts';

const REQUESTER = 'the requester of a prune cannot approve or reject it: a different person must';

/** A refusal by the store's deciding transaction, as the person is told. */
function refusalText(r: { reason: DecideRefusal; status?: PreviewStatus | undefined }): string {
  switch (r.reason) {
    case 'not-found':
      return 'this prune is gone';
    case 'not-pending':
      return `this prune is ${r.status ?? 'decided'}`;
    case 'expired':
      return 'this preview expired: request a new one';
    case 'requester':
      return REQUESTER;
    case 'already-decided':
      return 'you already decided on this prune';
    case 'deciding':
      return 'your decision on this prune is being recorded (another session or identity of yours sent one)';
    case 'enough-approvals':
      return 'this prune has the approvals it needs (they are being recorded)';
  }
}

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
  const journal = await ctx.deps.store.journal(id);
  const handover = await handoverOf(ctx, preview, journal);
  return { preview, journal, viewer: { canApprove: !reason, reason }, ...(handover ? { handover } : {}) };
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

/**
 * The pending previews waiting for this user's decision (the header's count, `GET /api/prune-previews?awaiting=me`):
 * those the approve route would let them approve now (whyNotApprove: the role there, not the requester, not decided
 * yet, pending, not expired) and, in impersonation mode (`access`), that they can see all of, as
 * mustSeeAllToApprove requires.
 */
export async function awaitingDecision(
  ctx: PruneContext,
  user: Principal,
  access?: ReaderAccess,
): Promise<StoredPreview[]> {
  const open = (await listPreviews(ctx, user, 'pending')).filter((p) => !whyNotApprove(p, user));
  if (!access) return open;
  const out: StoredPreview[] = [];
  for (const p of open) {
    const seen = await previewSeenBy({ preview: p, journal: [], viewer: { canApprove: true, reason: null } }, access);
    if (!seen.hidden) out.push(p);
  }
  return out;
}

/**
 * Splits a list by what the reader may `get` in Kubernetes (AccessReviewer.split for one user; in service mode
 * everything is visible), with the sentence saying what was hidden.
 */
export type ReaderAccess = <T>(
  items: readonly T[],
  refOf: (item: T) => ObjectRef,
) => Promise<{ visible: T[]; hidden: T[]; message: string | null }>;

/**
 * A preview as one person may see it. Candidates and cascaded objects of a kind or namespace their Kubernetes
 * RBAC does not let them `get` are left out (with the journal rows naming them), and so are the objects a hidden
 * candidate's deletion takes with it; what was left out is counted in `reasons` ("2 objects hidden: your
 * Kubernetes RBAC does not allow get on configmaps in dev"), never dropped silently. Such a reader cannot approve
 * (`viewer` says why): nobody approves a deletion they cannot fully see. `hidden` is that sentence, or null.
 */
export async function previewSeenBy(
  v: PreviewView,
  access: ReaderAccess,
): Promise<{ view: PreviewView; hidden: string | null }> {
  const candidates = v.preview.doc.candidates;
  const refs = new Map<string, ObjectRef>();
  for (const c of candidates) for (const r of [c.ref, ...c.cascades]) refs.set(refId(r), r);
  const split = await access([...refs.values()], (r) => r);
  if (!split.message) return { view: v, hidden: null };
  const denied = new Set(split.hidden.map(refId));
  const shown = candidates
    .filter((c) => !denied.has(c.id))
    .map((c) => ({ ...c, cascades: c.cascades.filter((r) => !denied.has(refId(r))) }));
  const visible = new Set(shown.flatMap((c) => [c.id, ...c.cascades.map(refId)]));
  // what a hidden candidate's deletion takes with it goes with it, counted apart (RBAC may allow get on those)
  const under = [...refs.keys()].filter((id) => !denied.has(id) && !visible.has(id)).length;
  const hidden = `${split.message}${under ? `; and ${under} object${under === 1 ? '' : 's'} their deletion takes with it` : ''}`;
  return {
    hidden,
    view: {
      preview: {
        ...v.preview,
        doc: { ...v.preview.doc, candidates: shown, reasons: [...v.preview.doc.reasons, hidden] },
      },
      journal: v.journal.filter((j) => visible.has(j.object)),
      // the hidden objects' names stay hidden here too (the counts are in `hidden`)
      ...(v.handover ? { handover: { ...v.handover, live: v.handover.live.filter((id) => visible.has(id)) } } : {}),
      viewer: v.viewer.canApprove
        ? { canApprove: false, reason: `You cannot approve a prune you cannot fully see: ${hidden}` }
        : v.viewer,
    },
  };
}

/**
 * Throws 403 (recorded through `onDenied`) when the reader cannot see every object of the preview: an approval
 * is a decision on all of it. A rejection deletes nothing and stays open to them.
 */
export async function mustSeeAllToApprove(
  v: PreviewView,
  access: ReaderAccess,
  onDenied: (reason: string, scope: { cluster: string; env: string; app: string }) => void,
): Promise<void> {
  const { hidden } = await previewSeenBy(v, access);
  if (!hidden) return;
  const reason = `You cannot approve a prune you cannot fully see: ${hidden}`;
  onDenied(reason, { cluster: v.preview.cluster, env: v.preview.env, app: v.preview.app });
  throw new HttpError(403, 'Forbidden', reason);
}

async function voidPreview(ctx: PruneContext, p: StoredPreview, reason: string, actor: string): Promise<void> {
  await voidPendingPreview(ctx.deps, p, reason, actor);
}

/**
 * An approval or a rejection by `user`. `onDenied` records a refusal for the role or the requester as evidence
 * (`access.denied`); every other refusal before the intent is one `action.refused` record.
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
  const person = me.person ?? `${me.issuer}#${me.subject}`;
  const denied = (): never => {
    onDenied(REQUESTER, scope);
    throw new HttpError(403, 'Forbidden', REQUESTER);
  };
  if (samePerson(me, p.requester)) denied();
  const action = input.decision === 'approve' ? 'prune.approved' : 'prune.rejected';
  const refuse = async (reason: string): Promise<never> => {
    await ctx.deps.recorder.refuse({
      time: new Date().toISOString(),
      actor: user.name,
      ...scope,
      action,
      reason,
      data: { previewId: p.id, snapshotHash: p.snapshotHash, decision: input.decision, who: me },
    });
    throw new HttpError(409, 'Conflict', reason);
  };
  if (p.decisions.some((d) => samePerson(d, me))) return refuse(refusalText({ reason: 'already-decided' }));
  if (p.status !== 'pending') return refuse(`this prune is ${p.status}${p.statusReason ? `: ${p.statusReason}` : ''}`);
  if (Date.parse(p.expiresAt) <= Date.now()) {
    await voidPreview(ctx, p, 'the preview expired', user.name);
    return refuse(refusalText({ reason: 'expired' }));
  }
  let recheck: SnapshotCheck['recheck'];
  if (input.decision === 'approve') {
    // bad input, not a decision: said, nothing recorded
    if (p.doc.planState === 'needs-override' && input.confirmation !== p.doc.confirmation)
      throw new HttpError(400, 'BadRequest', `this prune needs an override: type "${p.doc.confirmation}" to confirm`);
    const snap = await snapshotMatches(ctx, p, user);
    if (!snap.ok) {
      await voidPreview(ctx, p, `the live state no longer matches the preview: ${snap.reason}`, user.name);
      return refuse(`approval void: ${snap.reason}; request a new preview`);
    }
    recheck = snap.recheck;
  }
  // the same checks in one transaction with every other decider: only a decision that will count goes on
  const held = await ctx.deps.store.hold(id, { ...me, person, decision: input.decision });
  if (!held.ok) return held.reason === 'requester' ? denied() : refuse(refusalText(held));
  const time = new Date().toISOString();
  let result: Awaited<ReturnType<typeof ctx.deps.store.decide>> & { ok: true };
  try {
    result = await ctx.deps.recorder.act(
      {
        time,
        type: action,
        actor: user.name,
        ...scope,
        data: {
          previewId: p.id,
          snapshotHash: p.snapshotHash,
          approver: me,
          requester: p.requester,
          comment: input.comment,
          ...(p.doc.planState === 'needs-override' ? { override: true, reasons: p.doc.reasons } : {}),
          // the source had moved since the preview: rendered again there, the same candidates
          ...(recheck ? { recheckedAt: recheck } : {}),
        },
      },
      async (intent) => {
        const r = await ctx.deps.store.decide(
          id,
          { ...me, person, decision: input.decision, comment: input.comment, time, evidenceSeq: intent.seq },
          ctx.executor,
        );
        // a race lost after the intent (the preview was voided or rejected meanwhile): action.failed
        if (!r.ok) throw new HttpError(409, 'Conflict', refusalText(r));
        return r;
      },
      (o) => (o.ok ? { previewId: id, status: o.value.preview.status } : { previewId: id }),
    );
  } catch (e) {
    // not recorded (the intent could not be written, or the race was lost): the hold goes
    await ctx.deps.store.release(id, person).catch(() => undefined);
    throw e;
  }
  // the decision is recorded: what follows never turns it into an error the person would retry (the chaos
  // matrix's `appset-shrink × postgres-restart @ after-act` answered 503 to a done approval)
  if (result.preview.status === 'approved') await startOrRetry(ctx, id);
  try {
    return await viewPreview(ctx, id, user);
  } catch (e) {
    if (!storeUnreachable(e as { code?: unknown; message?: unknown })) throw e;
    // the decision as recorded (the journal, if the execution started, shows at the next read)
    return { preview: result.preview, journal: [], viewer: { canApprove: false, reason: 'you have decided' } };
  }
}

/**
 * Starts the execution of an approved preview; when the store cannot be reached, tries again on a back-off (1 s
 * doubling, for up to a minute) rather than leaving the approval to the recovery, which voids it once the live
 * state has moved on.
 */
async function startOrRetry(ctx: PruneContext, id: string): Promise<void> {
  try {
    await startExecution(ctx, id);
  } catch (e) {
    if (!storeUnreachable(e as { code?: unknown; message?: unknown })) throw e;
    const retry = (delay: number) => {
      if (delay > 32_000) return;
      setTimeout(() => {
        startExecution(ctx, id).catch(() => retry(delay * 2));
      }, delay).unref();
    };
    retry(1000);
  }
}
