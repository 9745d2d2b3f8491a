// Prune previews approved by a second person, executed by the BFF in bounded batches. This class only composes
// the steps; one preview id goes through them in this order:
//   requestPreview (plan-service.ts) → decide (approvals.ts; snapshot.ts checks the live state) →
//   startExecution (executor.ts: deletes, or stamps.ts: stamps) → recoverExecutions and recoverApprovals
//   (recovery.ts) after a crash.
//
// Preview: pin the app's source revision and render it with the controller's renderer (the diff's), take
// the controller's inventory (app.inventory plus the live objects that carry its tracking labels: a Flux
// Kustomization with `prune: false` drops stale objects from its inventory but leaves them live), read the
// candidates live and what their deletion cascades to, plan (domain/prune.ts), and store the plan with a
// snapshot hash over the revision and each candidate's uid and resourceVersion. Unknown is never empty: a
// failed render or a failed read gives `unknown` and nothing to approve.
// Approval: a reviewer who is not the requester (another person: identities linked by a verified email or by an
// admin are one person, names never are); `needs-override` needs two approvers and a typed confirmation; an
// approval is void when the preview expired or the snapshot no longer matches the live state. Every check that
// needs no write runs before the intent; a refusal is one `action.refused` record, never a `prune.approved`.
// Execution: exactly once (a row transition in the store), batches with DELETE preconditions (uid +
// resourceVersion), stop on the first failure or a health regression; an intent journal in the store says
// after a crash what was and was not deleted. Evidence before each action (fail closed) and after it.
// Who deletes: the console itself when the controller does not prune (Flux `prune: false`: stale objects leave
// its inventory and stay live) or the policy does not hold the controller there; when the controller prunes (Flux
// `prune: true`, Argo CD automated prune) in a governed namespace, the console lists each approved object's uid in
// the approval list only it may write (approval-params.ts; the annotation it also writes is a note for people and
// approves nothing) and the controller's own prune deletes them: the admission policy in
// deploy/prune-admission-policy.yaml denies the controllers every deletion of an unlisted uid in governed
// namespaces. An Argo CD app with `Prune=confirm` also gets `argocd.argoproj.io/deletion-approved`, only when its
// pending deletions are exactly the approved set.
// No Fastify types here.
import type { App } from '../../domain/app.ts';
import type { Principal } from '../auth/index.ts';
import { awaitingDecision, decide, listPreviews, viewPreview, type ReaderAccess } from './approvals.ts';
import { pruneContext, type PruneContext } from './context.ts';
import { executionsSettled } from './executor.ts';
import type { PreviewDoc, PreviewView, PruneServiceDeps, PruneServiceOptions, StoredPreview } from './model.ts';
import { planPreview, requestPreview } from './plan-service.ts';
import { recoverApprovals, recoverExecutions, settleUnknownDeletes } from './recovery.ts';
import { sweepApprovals } from './approval-params.ts';
import type { PreviewStatus } from './store.ts';

export class PruneService {
  private readonly ctx: PruneContext;
  /** this process: a restarted replica (same host name) recovers its own interrupted executions at once */
  readonly executor: string;

  constructor(deps: PruneServiceDeps, opts: PruneServiceOptions = {}) {
    this.ctx = pruneContext(deps, opts);
    this.executor = this.ctx.executor;
  }

  /** Plans a prune of the app now (no store, no evidence): what a preview stores. */
  plan(a: App, user: Principal): Promise<PreviewDoc> {
    return planPreview(this.ctx, a, user);
  }

  /** POST …/prune-previews: plans, records the request (fail closed) and stores the preview. */
  async create(a: App, user: Principal): Promise<PreviewView> {
    const id = await requestPreview(this.ctx, a, user);
    return viewPreview(this.ctx, id, user);
  }

  /**
   * A preview of a plan made elsewhere (an ApplicationSet's shrink: src/server/appsets): `a` is what the preview
   * belongs to (its id, cluster and environment scope the approval), `doc` its plan.
   */
  async createPlanned(a: App, user: Principal, doc: PreviewDoc): Promise<PreviewView> {
    const id = await requestPreview(this.ctx, a, user, doc);
    return viewPreview(this.ctx, id, user);
  }

  /** The context (the appsets planner reads live objects and their cascades with it). */
  get context(): PruneContext {
    return this.ctx;
  }

  view(id: string, user: Principal): Promise<PreviewView> {
    return viewPreview(this.ctx, id, user);
  }

  /** The previews this user may see (the reviewer queue: status pending). */
  list(user: Principal, status?: PreviewStatus): Promise<StoredPreview[]> {
    return listPreviews(this.ctx, user, status);
  }

  /**
   * The pending previews waiting for this user's decision: those they may approve now (the approve route's checks;
   * in impersonation mode `access` says whether they can see all of one).
   */
  awaiting(user: Principal, access?: ReaderAccess): Promise<StoredPreview[]> {
    return awaitingDecision(this.ctx, user, access);
  }

  /**
   * An approval or a rejection by `user`. `onDenied` records a refusal for the role or the requester as evidence
   * (`access.denied`); any other refusal before the intent is one `action.refused` record.
   * Returns the preview as it is after the decision (an approval that completes it starts the execution).
   */
  decide(
    id: string,
    user: Principal,
    input: { decision: 'approve' | 'reject'; comment: string; confirmation?: string | undefined },
    onDenied: (reason: string, scope: { cluster: string; env: string; app: string }) => void,
  ): Promise<PreviewView> {
    return decide(this.ctx, id, user, input, onDenied);
  }

  /** Waits for executions running in this process. */
  settled(): Promise<void> {
    return executionsSettled(this.ctx);
  }

  /**
   * At start (and periodically): reports interrupted executions exactly (nothing is deleted again), and executes
   * or voids approved previews whose execution was never claimed (the snapshot checked again).
   */
  async recover(): Promise<string[]> {
    const executions = await recoverExecutions(this.ctx);
    const approvals = await recoverApprovals(this.ctx);
    // deletes the cluster never answered, in prunes that failed with them unknown: read again
    await settleUnknownDeletes(this.ctx);
    // then the approval lists (approval-params.ts): tenant identities refreshed, lapsed or orphaned entries withdrawn
    const clusters = this.ctx.deps.clusters?.() ?? [];
    if (clusters.length) await sweepApprovals(this.ctx, clusters);
    return [...executions, ...approvals];
  }
}
