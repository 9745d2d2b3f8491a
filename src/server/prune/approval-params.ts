// The parameter of the prune admission policy (deploy/prune-admission-policy.yaml): one ConfigMap per cluster,
// gitops-console-approvals/gitops-console-prune-approvals, that only the console writes (the policy's guard and
// deploy/rbac.yaml). Its data lists each approved object under its uid (a GitOps controller may delete exactly
// those in governed namespaces) and the tenant namespaces whose ServiceAccounts the policy treats as controllers
// (`ns.<namespace>`).
//
// Entries are written by the executor right before it leaves an object to the controller (stamps.ts) and
// withdrawn: when the prune fails (executor.ts) or is voided (withdrawApprovals), when an object comes back into
// a render (forgetRendered), and by sweepApprovals for entries whose object is gone (pruned), whose approval
// lapsed, whose preview is no longer executing or done, or whose object survived the controller's reconcile of a
// newer revision. An entry whose preview this console's store does not know (another console's) stands until it
// lapses. A withdrawal takes the object's note (`gitops-console.dev/prune-approved`) off too, corrects the
// journal row of an object still live, and is recorded (best effort: it only ever takes a permission away).
// Entries are merge-patched in and out one key at a time, so concurrent writers (replicas) never lose each
// other's entries.
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import {
  APPROVALS_CONFIGMAP,
  APPROVALS_NAMESPACE,
  controllerIdentities,
  decodeEntry,
  encodeEntry,
  isIdentityKey,
  staleReason,
  type ApprovalEntry,
} from '../../domain/prune-approval.ts';
import { PRUNE_APPROVED_ANNOTATION, pruneKey } from '../../domain/prune.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import type { PruneContext } from './context.ts';
import type { StoredPreview } from './model.ts';

export const APPROVALS_ID = `${APPROVALS_NAMESPACE}/${APPROVALS_CONFIGMAP}`;
const PARAM_PATH = `/api/v1/namespaces/${APPROVALS_NAMESPACE}/configmaps/${APPROVALS_CONFIGMAP}`;

/** The cluster has no approvals namespace: deploy/prune-admission-policy.yaml is not installed there. */
export class ApprovalsNotInstalled extends Error {
  constructor(cluster: string) {
    super(
      `the prune admission policy is not installed in cluster ${cluster} (no namespace ${APPROVALS_NAMESPACE}): ` +
        "the controller's prune is not held there",
    );
  }
}

/** The approvals' data; undefined when the ConfigMap is missing. */
export async function readApprovals(conn: ClusterConnection): Promise<Record<string, string> | undefined> {
  const res = await conn.request('GET', PARAM_PATH, { timeoutMs: 10_000 });
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw conn.httpError(res, `GET ConfigMap ${APPROVALS_ID}`);
  return (JSON.parse(res.body) as { data?: Record<string, string> }).data ?? {};
}

/** The approvals' data, the ConfigMap created (empty) when it is missing; ApprovalsNotInstalled without its namespace. */
export async function ensureApprovals(conn: ClusterConnection): Promise<Record<string, string>> {
  const data = await readApprovals(conn);
  if (data) return data;
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: APPROVALS_CONFIGMAP,
      namespace: APPROVALS_NAMESPACE,
      labels: { 'app.kubernetes.io/part-of': 'gitops-console' },
    },
  });
  const res = await conn.request(
    'POST',
    `/api/v1/namespaces/${APPROVALS_NAMESPACE}/configmaps?fieldManager=gitops-console`,
    {
      timeoutMs: 10_000,
      contentType: 'application/json',
      body,
    },
  );
  if (res.status === 404) throw new ApprovalsNotInstalled(conn.name);
  if (res.status !== 201 && res.status !== 409) throw conn.httpError(res, `POST ConfigMap ${APPROVALS_ID}`);
  return (await readApprovals(conn)) ?? {};
}

/** Sets (a string) or removes (null) keys of the approvals' data in one merge patch. */
async function patchApprovals(conn: ClusterConnection, data: Record<string, string | null>): Promise<void> {
  if (!Object.keys(data).length) return;
  const body = JSON.stringify({ data });
  const res = await conn.request('PATCH', `${PARAM_PATH}?fieldManager=gitops-console`, {
    timeoutMs: 15_000,
    contentType: 'application/merge-patch+json',
    body,
  });
  if (res.status === 404) throw new ApprovalsNotInstalled(conn.name);
  if (res.status !== 200) throw conn.httpError(res, `PATCH ConfigMap ${APPROVALS_ID}`);
}

/** Lists one approved object: the controller may delete the object with this uid from now on. */
export async function listApproval(conn: ClusterConnection, uid: string, entry: ApprovalEntry): Promise<void> {
  await ensureApprovals(conn);
  await patchApprovals(conn, { [uid]: encodeEntry(entry) });
}

/** Takes approved objects off the list (one patch). */
export async function unlistApprovals(conn: ClusterConnection, uids: string[]): Promise<void> {
  await patchApprovals(conn, Object.fromEntries(uids.map((u) => [u, null])));
}

/** The entry the executor lists for one object of an approved preview. */
export function entryFor(
  ctx: PruneContext,
  p: StoredPreview,
  c: { id: string; ref: ObjectRef },
  now = new Date(),
): ApprovalEntry {
  const { cluster: _cluster, ...ref } = c.ref;
  return {
    preview: p.id,
    snapshot: p.snapshotHash.slice(0, 16),
    object: c.id,
    ref,
    app: p.app,
    observed: ctx.deps.app(p.app)?.source.revisionObserved ?? null,
    expires: new Date(now.getTime() + ctx.ttlMs).toISOString(),
    at: now.toISOString(),
  };
}

/**
 * The tenant namespaces of a cluster written into its approvals (`ns.<namespace>`): governed and tenant-labelled
 * namespaces, those of Kustomizations and HelmReleases naming a ServiceAccount, and those of Argo CD's sync impersonation accounts (domain/prune-approval.ts
 * controllerIdentities). A kind whose API is not
 * served counts as none; any other failed read changes nothing (the list never shrinks on an unknown).
 * Returns the keys added and removed.
 */
export async function syncControllerIdentities(
  conn: ClusterConnection,
): Promise<{ added: string[]; removed: string[] }> {
  const list = async (path: string): Promise<Obj[]> => {
    const res = await conn.request('GET', path, { timeoutMs: 15_000 });
    if (res.status === 404) return [];
    if (res.status !== 200) throw conn.httpError(res, `GET ${path}`);
    return (JSON.parse(res.body) as { items?: Obj[] }).items ?? [];
  };
  const [kustomizations, helmReleases, appProjects, applications, namespaces] = await Promise.all([
    list('/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations'),
    list('/apis/helm.toolkit.fluxcd.io/v2/helmreleases'),
    list('/apis/argoproj.io/v1alpha1/appprojects'),
    list('/apis/argoproj.io/v1alpha1/applications'),
    list('/api/v1/namespaces'),
  ]);
  const want = controllerIdentities({ kustomizations, helmReleases, appProjects, applications, namespaces });
  const data = await ensureApprovals(conn);
  const patch: Record<string, string | null> = {};
  for (const [k, why] of want) if (data[k] !== why) patch[k] = why;
  for (const k of Object.keys(data)) if (isIdentityKey(k) && !want.has(k)) patch[k] = null;
  await patchApprovals(conn, patch);
  return {
    added: Object.keys(patch).filter((k) => patch[k] !== null && data[k] === undefined),
    removed: Object.keys(patch).filter((k) => patch[k] === null),
  };
}

interface Withdrawal {
  uid: string;
  entry: ApprovalEntry | undefined;
  reason: string;
}

/**
 * Takes entries off the list, then (best effort) the note off each object still live, the journal row of each
 * approved object still live from `stamped` to `not-deleted`, and one evidence record per entry.
 */
async function withdraw(ctx: PruneContext, cluster: string, items: Withdrawal[]): Promise<void> {
  if (!items.length) return;
  const conn = ctx.deps.conn(cluster);
  await unlistApprovals(
    conn,
    items.map((i) => i.uid),
  );
  for (const { uid, entry, reason } of items) {
    let stillLive = false;
    if (entry) {
      const ref: ObjectRef = { cluster, ...entry.ref };
      try {
        const o = await ctx.live.read(ref);
        stillLive = !!o && metaOf(o).uid === uid && !metaOf(o).deletionTimestamp;
        if (o && stillLive && metaOf(o).annotations?.[PRUNE_APPROVED_ANNOTATION] !== undefined) {
          const body = JSON.stringify({ metadata: { uid, annotations: { [PRUNE_APPROVED_ANNOTATION]: null } } });
          await conn.request('PATCH', `${await ctx.live.path(ref)}?fieldManager=gitops-console`, {
            timeoutMs: 15_000,
            contentType: 'application/merge-patch+json',
            body,
          });
        }
      } catch {
        // the note is for people: the approval itself is gone already
      }
      if (stillLive)
        try {
          const journal = await ctx.deps.store.journal(entry.preview);
          for (const j of journal)
            if (j.object === entry.object && j.uid === uid && j.state === 'stamped')
              await ctx.deps.store.mark(
                entry.preview,
                j.position,
                ['stamped'],
                'not-deleted',
                `approval withdrawn before the controller pruned it: ${reason}`.slice(0, 500),
                new Date().toISOString(),
              );
        } catch {
          /* the journal is a report: the approval is gone either way */
        }
    }
    const p = entry ? await ctx.deps.store.get(entry.preview).catch(() => undefined) : undefined;
    await ctx.deps.recorder
      .record({
        time: new Date().toISOString(),
        type: 'prune.stamp',
        actor: 'console',
        app: entry?.app ?? null,
        cluster,
        env: p?.env ?? null,
        data: {
          withdrawn: true,
          previewId: entry?.preview ?? null,
          object: entry?.object ?? null,
          uid,
          approvals: APPROVALS_ID,
          stillLive,
          reason,
        },
      })
      .catch(() => undefined);
  }
}

/** The approvals of one cluster as entries (identities and values the console did not write aside). */
async function entriesOf(conn: ClusterConnection): Promise<Array<{ uid: string; entry: ApprovalEntry | undefined }>> {
  const data = (await readApprovals(conn)) ?? {};
  return Object.entries(data)
    .filter(([k]) => !isIdentityKey(k))
    .map(([uid, v]) => ({ uid, entry: decodeEntry(v) }));
}

/**
 * Withdraws every entry of a preview (its prune failed, it was voided, or it expired). Call it wherever a preview
 * that may have entries (executing, done) leaves that state for good: the executor does on a failed prune.
 */
export async function withdrawApprovals(ctx: PruneContext, p: StoredPreview, reason: string): Promise<number> {
  const conn = ctx.deps.conn(p.cluster);
  const mine = (await entriesOf(conn)).filter((x) => x.entry?.preview === p.id);
  await withdraw(
    ctx,
    p.cluster,
    mine.map((x) => ({ ...x, reason })),
  );
  return mine.length;
}

/**
 * Withdraws the entries of objects that are in a render again (the Git change that removed them was reverted):
 * call it with every render of an app the console makes (the prune plan, the diff, the release recorder).
 */
export async function forgetRendered(
  ctx: PruneContext,
  cluster: string,
  rendered: Array<Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>>,
): Promise<number> {
  if (!rendered.length) return 0;
  const keys = new Set(rendered.map(pruneKey));
  const back = (await entriesOf(ctx.deps.conn(cluster))).filter((x) => x.entry && keys.has(pruneKey(x.entry.ref)));
  await withdraw(
    ctx,
    cluster,
    back.map((x) => ({ ...x, reason: 'the object is in the render again' })),
  );
  return back.length;
}

/**
 * The approvals of each cluster brought up to date: the tenant identities synchronised, and every entry withdrawn
 * whose object is gone (pruned), whose approval lapsed, whose preview is no longer executing or done, or whose
 * object survived the controller's reconcile of a newer revision; a value the console did not write goes too. An object that cannot be read keeps its entry (unknown is not gone) until it lapses. Call it at start-up
 * (after recovery has settled interrupted executions) and periodically; returns the uids withdrawn per cluster.
 */
export async function sweepApprovals(ctx: PruneContext, clusters: string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const cluster of clusters) {
    const conn = ctx.deps.conn(cluster);
    try {
      await syncControllerIdentities(conn);
    } catch (e) {
      if (e instanceof ApprovalsNotInstalled) continue;
      // the identities stay as they were; the entries are still swept
    }
    let entries: Array<{ uid: string; entry: ApprovalEntry | undefined }>;
    try {
      entries = await entriesOf(conn);
    } catch {
      continue;
    }
    const stale: Withdrawal[] = [];
    const now = Date.now();
    for (const { uid, entry } of entries) {
      if (!entry) {
        stale.push({ uid, entry, reason: 'not an entry the console wrote' });
        continue;
      }
      if (Date.parse(entry.expires) <= now) {
        stale.push({ uid, entry, reason: `the approval lapsed at ${entry.expires}` });
        continue;
      }
      let live: Obj | undefined;
      try {
        live = await ctx.live.read({ cluster, ...entry.ref });
      } catch {
        continue;
      }
      const preview = await ctx.deps.store.get(entry.preview);
      const reason = staleReason(entry, {
        now,
        preview,
        live,
        uid,
        revisionObserved: ctx.deps.app(entry.app)?.source.revisionObserved,
      });
      if (reason) stale.push({ uid, entry, reason });
    }
    await withdraw(ctx, cluster, stale);
    out[cluster] = stale.map((s) => s.uid);
  }
  return out;
}
