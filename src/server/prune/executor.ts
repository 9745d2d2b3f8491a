// The third step of a prune: claim an approved preview (exactly one claimant) and execute it in bounded batches
// that stop on the first failure or a health regression; the console deletes each object itself (DELETE with
// preconditions) or, when the controller prunes and the admission policy holds it there (a governed namespace),
// lists its approval for the controller (stamps.ts, approval-params.ts). A failed prune withdraws every approval
// it listed. Evidence before and after.
import type { HealthStatus } from '../../domain/app.ts';
import { APPSET_REFRESH_ANNOTATION } from '../../domain/appset.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { faultPoint } from '../evidence/index.ts';
import { HttpError } from '../http/errors.ts';
import { neverSent, settleUnansweredWrite, unanswered } from '../kube/unanswered-write.ts';
import { metaOf } from '../../domain/object-meta.ts';
import { mustPreview, type PruneContext } from './context.ts';
import { controllerOf } from './handover.ts';
import type { PreviewCandidate, StoredPreview } from './model.ts';
import { ApprovalsNotInstalled, ensureApprovals, sweepApprovals, withdrawApprovals } from './approval-params.ts';
import { approveArgoDeletions, heldByPolicy, stampOne } from './stamps.ts';
import type { JournalEntry } from './store.ts';

const HEALTH_RANK: Record<HealthStatus, number> = {
  Healthy: 0,
  Progressing: 1,
  Suspended: 1,
  Unknown: 2,
  Missing: 3,
  Degraded: 3,
};

/** Claims an approved preview and runs it in the background (exactly one claimant runs it). */
export async function startExecution(ctx: PruneContext, id: string): Promise<void> {
  const p = await mustPreview(ctx, id);
  const deletable = p.doc.candidates.filter((c) => c.deletable);
  const entries = deletable.map((c, i) => ({
    batch: Math.floor(i / p.doc.batchSize),
    object: c.id,
    uid: c.uid ?? '',
    resourceVersion: c.resourceVersion ?? '',
  }));
  if (!(await ctx.deps.store.claim(id, ctx.executor, entries, new Date().toISOString()))) {
    // a claim whose COMMIT went through but whose answer was lost (a retry after the store came back) is this
    // process's own: it runs it, nobody else would (until the recovery's staleness)
    const now = await ctx.deps.store.get(id);
    if (now?.status !== 'executing' || now.executor !== ctx.executor || ctx.running.has(id)) return;
  }
  const run = execute(ctx, p).catch(async (e: unknown) => {
    await ctx.deps.store
      .transition(
        id,
        ['executing'],
        'failed',
        `stopped: ${e instanceof Error ? e.message : String(e)}`,
        new Date().toISOString(),
      )
      .catch(() => undefined);
  });
  ctx.running.set(
    id,
    run.finally(() => ctx.running.delete(id)),
  );
}

/** Why the console deletes an object whose controller prunes: the admission policy does not hold it there. */
function notHeld(r: ObjectRef, installed: boolean): string {
  if (!installed) return `the prune admission policy is not installed in cluster ${r.cluster}: the console deletes it`;
  const what = r.namespace ? `namespace ${r.namespace}` : `${r.kind} ${r.name}`;
  return `${what} is not governed: the controller's prune of it is not held, so the console deletes it`;
}

/**
 * Asks the applicationset-controller to reconcile the ApplicationSet now (its refresh annotation, which it removes
 * when done): it deletes the Applications whose uids were just listed.
 */
async function refreshAppSet(ctx: PruneContext, p: StoredPreview): Promise<void> {
  const set = p.doc.appSet;
  if (!set) return;
  const conn = ctx.deps.conn(p.cluster);
  const path = `/apis/argoproj.io/v1alpha1/namespaces/${encodeURIComponent(set.namespace)}/applicationsets/${encodeURIComponent(set.name)}`;
  // its value is when the console asked: the controller looks only for the annotation, and one still in place (a
  // reconcile failing, e.g. while Git was down, and backing off for minutes) would be no change that wakes it
  const asked = new Date().toISOString();
  const body = JSON.stringify({ metadata: { uid: set.uid, annotations: { [APPSET_REFRESH_ANNOTATION]: asked } } });
  const res = await conn.request('PATCH', `${path}?fieldManager=gitops-console`, {
    timeoutMs: 15_000,
    contentType: 'application/merge-patch+json',
    headers: { 'Content-Length': String(Buffer.byteLength(body)) },
    body,
  });
  if (res.status !== 200) throw conn.httpError(res, `PATCH ApplicationSet ${set.name}`);
}

/** Waits for executions running in this process. */
export async function executionsSettled(ctx: PruneContext): Promise<void> {
  await Promise.all([...ctx.running.values()]);
}

async function execute(ctx: PruneContext, p: StoredPreview): Promise<void> {
  const { deps } = ctx;
  const journal = await deps.store.journal(p.id);
  const byId = new Map(p.doc.candidates.map((c) => [c.id, c]));
  const batches = [...new Set(journal.map((j) => j.batch))].sort((a, b) => a - b);
  const startHealth = deps.app(p.app)?.health ?? 'Unknown';
  const base = { app: p.app, cluster: p.cluster, env: p.env, actor: 'console' };
  const byController = p.doc.deletedBy === 'controller';
  let stop: string | undefined;
  let deleted = 0;
  let listed = 0;
  // the controller deletes only where the policy holds it: a governed namespace of a cluster where the policy is
  // installed; anywhere else the console deletes the object itself (or says why it cannot)
  let installed = false;
  const governed = new Map<string, boolean>();
  if (byController)
    try {
      await sweepApprovals(ctx, [p.cluster]).catch(() => undefined);
      await ensureApprovals(deps.conn(p.cluster));
      installed = true;
    } catch (e) {
      if (!(e instanceof ApprovalsNotInstalled)) stop = e instanceof Error ? e.message : String(e);
    }
  for (const b of stop ? [] : batches) {
    let health = deps.app(p.app)?.health ?? 'Unknown';
    // Progressing is also a controller's routine reconcile (Flux's Reconciling every interval) or a rollout: given
    // time to settle, so that only what it settles to (Degraded after a deletion) stops the prune
    if (b > 0 && health === 'Progressing' && startHealth !== 'Progressing') {
      const until = Date.now() + ctx.settleMs;
      while (health === 'Progressing' && Date.now() < until) {
        await new Promise((r) => setTimeout(r, Math.min(500, ctx.settleMs)));
        health = deps.app(p.app)?.health ?? 'Unknown';
      }
    }
    if (b > 0 && HEALTH_RANK[health] > HEALTH_RANK[startHealth]) {
      stop = `the app's health regressed from ${startHealth} to ${health} between batches`;
      break;
    }
    const items = journal.filter((j) => j.batch === b);
    try {
      await deps.recorder.act(
        {
          ...base,
          time: new Date().toISOString(),
          type: 'prune.batch',
          data: { previewId: p.id, batch: b, of: batches.length, objects: items.map((j) => j.object) },
        },
        async (intent) => {
          for (const j of items) {
            const c = byId.get(j.object);
            if (!c) throw new Error(`journal names ${j.object}, which the preview does not`);
            // an ApplicationSet shrink: the policy holds the applicationset-controller's DELETE of an Application
            // in any namespace (gitops-console-appset-shrink), its resources where they are governed
            const held =
              byController &&
              installed &&
              ((p.doc.appSet && c.ref.group === 'argoproj.io' && c.ref.kind === 'Application') ||
                (await heldByPolicy(ctx, c.ref, governed)));
            if (held) {
              await stampOne(ctx, p, j, c);
              listed++;
            } else await deleteOne(ctx, p, j, c, byController ? notHeld(c.ref, installed) : undefined);
            deleted++;
            // a chaos run's point (issue 42): the batch's first object deleted and journalled, the rest not yet
            if (j === items[0] && items.length > 1) await faultPoint(`${intent.type}:mid-act`);
          }
        },
        () => ({ previewId: p.id, batch: b }),
      );
    } catch (e) {
      stop = e instanceof Error ? e.message : String(e);
      break;
    }
  }
  if (listed && !stop && p.doc.controller === 'argocd' && !p.doc.appSet)
    try {
      await approveArgoDeletions(ctx, p);
    } catch (e) {
      stop = e instanceof Error ? e.message : String(e);
    }
  // the applicationset-controller retries a denied deletion with a growing back-off: asked to reconcile now
  let refreshed: string | undefined;
  if (listed && !stop && p.doc.appSet)
    refreshed = await refreshAppSet(ctx, p).then(
      () => 'refreshed',
      (e: unknown) =>
        `its refresh failed (the controller retries on its own): ${e instanceof Error ? e.message : String(e)}`,
    );
  // a failed prune approves nothing more: every listing it made is withdrawn (rows still live: not-deleted)
  if (stop && listed)
    await withdrawApprovals(ctx, p, `the prune failed: ${stop}`).catch((e: unknown) => {
      stop = `${stop}; withdrawing its approvals failed (they lapse at the preview's TTL): ${e instanceof Error ? e.message : String(e)}`;
    });
  const now = new Date().toISOString();
  const final = await deps.store.journal(p.id);
  const notDeleted = final.filter((j) => j.state === 'planned').map((j) => j.object);
  for (const j of final)
    if (j.state === 'planned') await deps.store.mark(p.id, j.position, ['planned'], 'not-deleted', stop ?? null, now);
  const status = stop ? 'failed' : 'done';
  const controllerName = controllerOf(p);
  // a recovery by another replica (this one looked dead: its journal idle too long) may have reported it
  // already: then that report stands, and no second outcome is recorded
  const finished = await deps.store.transition(
    p.id,
    ['executing'],
    status,
    stop ??
      (listed
        ? `${listed} object${listed === 1 ? '' : 's'} stamped with the approval: ${controllerName}'s next prune deletes ${listed === 1 ? 'it' : 'them'}${deleted > listed ? `; ${deleted - listed} deleted by the console (not governed)` : ''}`
        : null),
    now,
  );
  if (!finished) return;
  await deps.recorder.record({
    ...base,
    time: now,
    type: 'prune.executed',
    data: {
      previewId: p.id,
      status,
      ...(byController
        ? {
            deletedBy: 'controller',
            stamped: listed,
            deletedByConsole: deleted - listed,
            notStamped: notDeleted,
            ...(p.doc.appSet ? { applicationSet: `${p.doc.appSet.namespace}/${p.doc.appSet.name}`, refreshed } : {}),
          }
        : { deleted, notDeleted }),
      ...(stop ? { stoppedBecause: stop } : {}),
    },
  });
}

/**
 * One DELETE with preconditions: intent in the journal and the evidence first, the outcome after. `because` says
 * why the console deletes an object its controller would prune (not governed). Already gone (404): `gone`.
 */
async function deleteOne(
  ctx: PruneContext,
  p: StoredPreview,
  j: JournalEntry,
  c: PreviewCandidate,
  because?: string,
): Promise<void> {
  const conn = ctx.deps.conn(c.ref.cluster);
  await ctx.deps.recorder.act(
    {
      time: new Date().toISOString(),
      type: 'prune.delete',
      actor: 'console',
      app: p.app,
      cluster: p.cluster,
      env: p.env,
      data: {
        previewId: p.id,
        object: c.id,
        uid: j.uid,
        resourceVersion: j.resourceVersion,
        propagationPolicy: p.doc.propagationPolicy,
        ...(because ? { because } : {}),
      },
    },
    async () => {
      if (!(await ctx.deps.store.mark(p.id, j.position, ['planned'], 'deleting', null, new Date().toISOString())))
        throw new Error(`${c.id} was already attempted (journal)`);
      const path = await ctx.live.path(c.ref);
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: { uid: j.uid, resourceVersion: j.resourceVersion },
        propagationPolicy: p.doc.propagationPolicy,
      });
      // an explicit length: a chunked DELETE body leaves the apiserver's keep-alive connection unusable
      // (the next request on it gets a bare "400 Bad Request")
      const res = await conn
        .request('DELETE', path, {
          timeoutMs: 15_000,
          contentType: 'application/json',
          headers: { 'Content-Length': String(Buffer.byteLength(body)) },
          body,
        })
        .catch(async (e: unknown) => {
          // no answer: the journal says what the cluster has, not `deleting` (kube/unanswered-write.ts)
          const what = `DELETE ${c.id}: the cluster did not answer`;
          const settled = unanswered(e)
            ? await settleUnansweredWrite(
                conn,
                path,
                j.resourceVersion,
                (live) => metaOf(live).uid !== j.uid || !!metaOf(live).deletionTimestamp,
                `prune ${p.id}`,
                { ...ctx.deps.settle, goneIsApplied: true },
              )
            : neverSent(e)
              ? ({ outcome: 'not-applied', how: 'moved-on', live: {} } as const)
              : undefined;
          if (!settled) throw e;
          if (settled.outcome === 'applied') return { status: 200, headers: {}, body: '' };
          if (settled.outcome === 'not-applied')
            await ctx.deps.store.mark(
              p.id,
              j.position,
              ['deleting'],
              'failed',
              `${what} (${e instanceof Error ? e.message : String(e)}); not deleted`.slice(0, 500),
              new Date().toISOString(),
            );
          // unknown (no answer within the settle deadline): it stays `deleting` in the failed prune, which is what
          // the journal can truthfully say now; recovery reads it again later (recovery.ts settleUnknownDeletes)
          throw new HttpError(502, 'ClusterUnreachable', `${what}: stopped`, p.cluster);
        });
      const now = new Date().toISOString();
      if (res.status === 200 || res.status === 202) {
        await ctx.deps.store.mark(p.id, j.position, ['deleting'], 'deleted', because ?? String(res.status), now);
        return;
      }
      if (res.status === 404 && because) {
        // its controller, whose prune is not held here, deleted it first
        await ctx.deps.store.mark(p.id, j.position, ['deleting'], 'gone', 'already deleted (by its controller)', now);
        return;
      }
      const err = conn.httpError(res, `DELETE ${c.ref.kind} ${c.ref.name}`);
      await ctx.deps.store.mark(
        p.id,
        j.position,
        ['deleting'],
        'failed',
        `${res.status}: ${err.message}`.slice(0, 500),
        now,
      );
      throw new HttpError(
        res.status === 409 ? 409 : 502,
        res.status === 409 ? 'Conflict' : 'ClusterError',
        res.status === 409
          ? `${c.id} changed since the preview (precondition failed): stopped`
          : res.status === 403 && because
            ? `${because}, but the console may not delete it (403): delete it by hand: stopped`
            : `DELETE ${c.id} failed (${res.status}): stopped`,
      );
    },
    () => ({ previewId: p.id, object: c.id }),
  );
}
