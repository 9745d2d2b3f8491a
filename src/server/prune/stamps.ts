// When the controller prunes (Flux `prune: true`, Argo CD automated prune) the console deletes nothing itself: it
// stamps its approval (`gitops-console.dev/prune-approved`) on each approved object and the controller's own
// prune deletes them; an Argo CD app with `Prune=confirm` also gets `argocd.argoproj.io/deletion-approved`.
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import {
  approvalStamp,
  ARGO_DELETION_APPROVED,
  ARGO_SYNC_OPTIONS,
  PRUNE_APPROVED_ANNOTATION,
} from '../../domain/prune.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { HttpError } from '../http/errors.ts';
import type { PruneContext } from './context.ts';
import type { PreviewCandidate, StoredPreview } from './model.ts';
import type { JournalEntry } from './store.ts';

/** Whether the live object is the journal's (same uid) and carries this preview's stamp. */
export function carriesStamp(o: Obj, p: StoredPreview, j: JournalEntry): boolean {
  const stamp = approvalStamp(p.id, p.snapshotHash);
  return metaOf(o).uid === j.uid && metaOf(o).annotations?.[PRUNE_APPROVED_ANNOTATION] === stamp;
}

/**
 * The console's approval on one object the controller will prune: a merge patch of the annotation with the
 * object's uid and resourceVersion (from the preview) as preconditions. Intent in the journal and the evidence
 * first, the outcome after; the controller's own prune deletes the object (the admission policy lets it).
 */
export async function stampOne(
  ctx: PruneContext,
  p: StoredPreview,
  j: JournalEntry,
  c: PreviewCandidate,
): Promise<void> {
  const conn = ctx.deps.conn(c.ref.cluster);
  const stamp = approvalStamp(p.id, p.snapshotHash);
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
        annotation: { [PRUNE_APPROVED_ANNOTATION]: stamp },
      },
    },
    async () => {
      if (!(await ctx.deps.store.mark(p.id, j.position, ['planned'], 'stamping', null, new Date().toISOString())))
        throw new Error(`${c.id} was already attempted (journal)`);
      const path = await ctx.live.path(c.ref);
      // uid and resourceVersion in a merge patch are preconditions: another object or a newer version is a 409
      const body = JSON.stringify({
        metadata: {
          uid: j.uid,
          resourceVersion: j.resourceVersion,
          annotations: { [PRUNE_APPROVED_ANNOTATION]: stamp },
        },
      });
      const res = await conn.request('PATCH', `${path}?fieldManager=gitops-console`, {
        timeoutMs: 15_000,
        contentType: 'application/merge-patch+json',
        headers: { 'Content-Length': String(Buffer.byteLength(body)) },
        body,
      });
      const now = new Date().toISOString();
      if (res.status === 200) {
        const rv = (JSON.parse(res.body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
        await ctx.deps.store.mark(p.id, j.position, ['stamping'], 'stamped', stamp, now);
        return rv ?? null;
      }
      const err = conn.httpError(res, `PATCH ${c.ref.kind} ${c.ref.name}`);
      await ctx.deps.store.mark(
        p.id,
        j.position,
        ['stamping'],
        'failed',
        `${res.status}: ${err.message}`.slice(0, 500),
        now,
      );
      const changed = res.status === 409 || res.status === 404 || res.status === 422;
      throw new HttpError(
        changed ? 409 : 502,
        changed ? 'Conflict' : 'ClusterError',
        changed
          ? `${c.id} changed since the preview (precondition failed): stopped`
          : `stamping ${c.id} failed (${res.status}): stopped`,
      );
    },
    (o) => ({ previewId: p.id, object: c.id, ...(o.ok ? { resourceVersion: o.value } : {}) }),
  );
}

/**
 * Argo CD with the sync option `Prune=confirm` waits for `argocd.argoproj.io/deletion-approved` on the
 * Application before it prunes: written once every approved object carries the console's stamp (the stamps,
 * not this annotation, decide what may be deleted: it approves every pending deletion of the app).
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
