// When the controller prunes (Flux `prune: true`, Argo CD automated prune) the console deletes nothing itself in a
// governed namespace: it lists each approved object's uid in the approvals ConfigMap (approval-params.ts), which
// is what the admission policy lets the controller delete, and notes the approval on the object
// (`gitops-console.dev/prune-approved`, a note for people that approves nothing); an Argo CD app with
// `Prune=confirm` also gets `argocd.argoproj.io/deletion-approved`, only when its pending deletions are exactly the
// approved objects. Where the policy does not hold the controller (the namespace is not governed), the executor
// deletes the object itself instead (heldByPolicy).
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import { isGoverned, isGovernedClusterKind, pendingDeletionsMatch } from '../../domain/prune-approval.ts';
import {
  approvalStamp,
  ARGO_DELETION_APPROVED,
  ARGO_SYNC_OPTIONS,
  PRUNE_APPROVED_ANNOTATION,
  pruneKey,
} from '../../domain/prune.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { HttpError } from '../http/errors.ts';
import { APPROVALS_ID, entryFor, listApproval, unlistApprovals } from './approval-params.ts';
import type { PruneContext } from './context.ts';
import type { PreviewCandidate, StoredPreview } from './model.ts';
import type { JournalEntry } from './store.ts';
import { isResourceVersion, pinnedVersion } from './version.ts';

/** Whether the live object is the journal's (same uid) and carries this preview's note (its uid was listed first). */
export function carriesStamp(o: Obj, p: StoredPreview, j: JournalEntry): boolean {
  const stamp = approvalStamp(p.id, p.snapshotHash);
  return metaOf(o).uid === j.uid && metaOf(o).annotations?.[PRUNE_APPROVED_ANNOTATION] === stamp;
}

/**
 * Whether the admission policy holds the controller's deletion of this object: its namespace is governed (a
 * Namespace: itself), or it is of a cluster-scoped kind the policy governs everywhere (a CRD, a ClusterRole, …:
 * isGovernedClusterKind); another cluster-scoped object never is. `cache` keeps each namespace's answer for one
 * execution; a failed read throws (unknown: the execution stops).
 */
export async function heldByPolicy(ctx: PruneContext, r: ObjectRef, cache: Map<string, boolean>): Promise<boolean> {
  const ns = r.group === '' && r.kind === 'Namespace' ? r.name : r.namespace;
  if (!ns) return isGovernedClusterKind(r.group, r.kind);
  const known = cache.get(ns);
  if (known !== undefined) return known;
  const o = await ctx.live.read({ cluster: r.cluster, group: '', version: 'v1', kind: 'Namespace', name: ns });
  const held = isGoverned(o);
  cache.set(ns, held);
  return held;
}

/**
 * The console's approval of one object the controller will prune. Intent in the journal and the evidence first;
 * then the object is read (still the preview's uid and resourceVersion, else 409), its uid listed in the approvals
 * ConfigMap (from now on the controller may delete it), and the note merge-patched on with uid and
 * resourceVersion as preconditions (a change in between: the listing is withdrawn, 409). An object gone by then
 * was pruned by the controller already. The controller's own prune deletes the object.
 */
export async function stampOne(
  ctx: PruneContext,
  p: StoredPreview,
  j: JournalEntry,
  c: PreviewCandidate,
): Promise<void> {
  const conn = ctx.deps.conn(c.ref.cluster);
  const stamp = approvalStamp(p.id, p.snapshotHash);
  const entry = entryFor(ctx, p, c);
  await ctx.deps.recorder.act(
    {
      time: new Date().toISOString(),
      type: 'prune.stamp',
      actor: 'console',
      app: p.app,
      cluster: p.cluster,
      env: p.env,
      data: {
        previewId: p.id,
        object: c.id,
        uid: j.uid,
        resourceVersion: j.resourceVersion,
        approval: { configMap: APPROVALS_ID, key: j.uid, expires: entry.expires },
        annotation: { [PRUNE_APPROVED_ANNOTATION]: stamp },
      },
    },
    async () => {
      if (!(await ctx.deps.store.mark(p.id, j.position, ['planned'], 'stamping', null, new Date().toISOString())))
        throw new Error(`${c.id} was already attempted (journal)`);
      const fail = async (detail: string, changed: boolean): Promise<never> => {
        await ctx.deps.store.mark(
          p.id,
          j.position,
          ['stamping'],
          'failed',
          detail.slice(0, 500),
          new Date().toISOString(),
        );
        throw new HttpError(
          changed ? 409 : 502,
          changed ? 'Conflict' : 'ClusterError',
          changed ? `${c.id} changed since the preview (precondition failed): stopped` : `${detail}: stopped`,
        );
      };
      const o = await ctx.live.read(c.ref);
      if (!o || metaOf(o).uid !== j.uid || pinnedVersion(o, c.ref) !== j.resourceVersion)
        return fail(o ? '409: changed since the preview (uid/resourceVersion)' : '404: gone before its approval', true);
      try {
        await listApproval(conn, j.uid, entry);
      } catch (e) {
        return fail(`listing ${c.id} in ${APPROVALS_ID} failed: ${e instanceof Error ? e.message : String(e)}`, false);
      }
      const path = await ctx.live.path(c.ref);
      // uid and resourceVersion in a merge patch are preconditions: another object or a newer version is a 409
      const body = JSON.stringify({
        metadata: {
          uid: j.uid,
          // an Application's pin is a digest the console checked just above (version.ts), not a resourceVersion
          ...(isResourceVersion(j.resourceVersion) ? { resourceVersion: j.resourceVersion } : {}),
          annotations: { [PRUNE_APPROVED_ANNOTATION]: stamp },
        },
      });
      const res = await conn.request('PATCH', `${path}?fieldManager=gitops-console`, {
        timeoutMs: 15_000,
        contentType: 'application/merge-patch+json',
        body,
      });
      const now = new Date().toISOString();
      if (res.status === 200) {
        const rv = (JSON.parse(res.body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
        await ctx.deps.store.mark(p.id, j.position, ['stamping'], 'stamped', stamp, now);
        return rv ?? null;
      }
      if (res.status === 404) {
        // listed a moment ago, gone now: the controller's prune deleted it (its listing goes with it)
        await unlistApprovals(conn, [j.uid]).catch(() => undefined);
        await ctx.deps.store.mark(p.id, j.position, ['stamping'], 'gone', 'pruned by the controller once listed', now);
        return null;
      }
      await unlistApprovals(conn, [j.uid]).catch(() => undefined);
      const err = conn.httpError(res, `PATCH ${c.ref.kind} ${c.ref.name}`);
      const changed = res.status === 409 || res.status === 422;
      return fail(
        changed ? `${res.status}: ${err.message}` : `stamping ${c.id} failed (${res.status}): ${err.message}`,
        changed,
      );
    },
    (o) => ({ previewId: p.id, object: c.id, ...(o.ok ? { resourceVersion: o.value } : {}) }),
  );
}

/**
 * Argo CD with the sync option `Prune=confirm` waits for `argocd.argoproj.io/deletion-approved` on the
 * Application before it prunes. It approves every pending deletion of the app, so it is written only when those
 * (the Application's `status.resources` marked `requiresPruning`) are exactly the objects this execution listed;
 * otherwise it is not written and the execution stops (the listings are withdrawn). The listings, not this
 * annotation, are what the admission policy lets the controller delete.
 */
export async function approveArgoDeletions(ctx: PruneContext, p: StoredPreview): Promise<void> {
  const a = ctx.deps.app(p.app);
  if (!a) throw new Error(`the app ${p.app} is gone`);
  const ref: ObjectRef = {
    cluster: a.cluster,
    group: 'argoproj.io',
    version: 'v1alpha1',
    kind: 'Application',
    namespace: a.namespace,
    name: a.name,
  };
  const o = await ctx.live.read(ref);
  if (!o) throw new Error(`the Application ${a.namespace}/${a.name} is gone`);
  const spec = (o.spec ?? {}) as { syncPolicy?: { syncOptions?: string[] } };
  const options = [
    ...(spec.syncPolicy?.syncOptions ?? []),
    ...(metaOf(o).annotations?.[ARGO_SYNC_OPTIONS] ?? '').split(','),
  ].map((x) => x.trim());
  if (!options.includes('Prune=confirm')) return;
  const byId = new Map(p.doc.candidates.map((c) => [c.id, c]));
  const approved = (await ctx.deps.store.journal(p.id))
    .filter((j) => j.state === 'stamped')
    .flatMap((j) => {
      const c = byId.get(j.object);
      return c ? [pruneKey(c.ref)] : [];
    });
  const match = pendingDeletionsMatch(o, approved);
  if (!match.ok)
    throw new Error(
      `${ARGO_DELETION_APPROVED} not written: the Application's pending deletions are not exactly the approved objects` +
        (match.notApproved.length ? `; pending but not approved: ${match.notApproved.join(', ')}` : '') +
        (match.notPending.length ? `; approved but not pending: ${match.notPending.join(', ')}` : ''),
    );
  const value = new Date().toISOString();
  const conn = ctx.deps.conn(a.cluster);
  await ctx.deps.recorder.act(
    {
      time: value,
      type: 'prune.deletion-approved',
      actor: 'console',
      app: p.app,
      cluster: p.cluster,
      env: p.env,
      data: {
        previewId: p.id,
        application: `${a.namespace}/${a.name}`,
        pending: match.pending,
        annotation: { [ARGO_DELETION_APPROVED]: value },
      },
    },
    async () => {
      const path = await ctx.live.path(ref);
      const body = JSON.stringify({ metadata: { annotations: { [ARGO_DELETION_APPROVED]: value } } });
      const res = await conn.request('PATCH', `${path}?fieldManager=gitops-console`, {
        timeoutMs: 15_000,
        contentType: 'application/merge-patch+json',
        headers: { 'Content-Length': String(Buffer.byteLength(body)) },
        body,
      });
      if (res.status !== 200) throw conn.httpError(res, `PATCH Application ${a.name}`);
    },
    () => ({ previewId: p.id }),
  );
}
