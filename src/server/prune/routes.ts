// Prune previews: request (developers and up), the reviewer queue, one preview, approve / reject (reviewers,
// never the requester). Thin: parse, call one service function, validate. State, requester and approvers
// come from the store and the session only, never from a request body. In impersonation mode every preview is
// shown as the reader's Kubernetes RBAC lets it be seen, and only a reviewer who sees all of it may approve it
// (approvals.ts previewSeenBy, mustSeeAllToApprove). The list holds only previews of apps the reader may see (in
// impersonation mode: whose object its Kubernetes RBAC lets it get); one preview it may not see is a 403 recorded as
// access.denied (issue 40).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  PruneDecisionBody,
  PrunePreviewParams,
  PrunePreviewResponse,
  PrunePreviewsQuery,
  PrunePreviewsResponse,
  type PrunePreview,
} from '../../api/schemas.ts';
import { AccessReviewer, appVisibility, recordDenial, withVisibleApps } from '../auth/index.ts';
import { whyNot } from '../../domain/access.ts';
import type { Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { appOf } from '../apps/index.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { managedCluster } from '../auth/index.ts';
import { DiffService } from '../diff/index.ts';
import { mustSeeAllToApprove, previewSeenBy, type ReaderAccess } from './approvals.ts';
import type { PreviewDoc, PreviewView, StoredPreview } from './model.ts';
import { PruneService } from './service.ts';
import { mustPreview } from './context.ts';
import { PruneStore } from './store.ts';
import { AppSetService } from './appsets.ts';
import { appSetRoutes } from './appset-routes.ts';

/** The list's query; `awaiting=me`: the previews waiting for the signed-in user's decision. */
export const PreviewsQuery = PrunePreviewsQuery.extend({ awaiting: z.literal('me').optional() });

function summaryOf(p: StoredPreview): Omit<PrunePreview, 'candidates' | 'journal' | 'decisions'> {
  const c = p.doc.candidates;
  return {
    id: p.id,
    appId: p.app,
    cluster: p.cluster,
    env: p.env,
    controller: p.doc.controller,
    revision: p.doc.revision,
    renderHash: p.doc.renderHash,
    plan: p.doc.planState,
    reasons: p.doc.reasons,
    status: p.status,
    statusReason: p.statusReason,
    snapshotHash: p.snapshotHash,
    requestedBy: p.requester,
    createdAt: p.createdAt,
    expiresAt: p.expiresAt,
    requiredApprovals: p.requiredApprovals,
    confirmation: p.doc.confirmation,
    propagationPolicy: p.doc.propagationPolicy,
    batchSize: p.doc.batchSize,
    deletedBy: p.doc.deletedBy ?? 'console',
    summary: {
      candidates: c.length,
      protected: c.filter((x) => x.protectedBy).length,
      deletions: c.filter((x) => x.deletable).length,
      cascades: c.filter((x) => x.deletable).reduce((n, x) => n + x.cascades.length, 0),
    },
  };
}

const response = (v: PreviewView) =>
  validated(PrunePreviewResponse, {
    preview: {
      ...summaryOf(v.preview),
      decisions: v.preview.decisions,
      candidates: v.preview.doc.candidates,
      journal: v.journal.map(({ position, batch, object, state, detail, updatedAt }) => ({
        position,
        batch,
        object,
        state,
        detail,
        updatedAt,
      })),
    },
    viewer: v.viewer,
    ...(v.handover ? { handover: v.handover } : {}),
  });

export const pruneRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const index = deps.index;
  if (!index) return;
  const diffs = new DiffService(deps);
  /** what the signed-in user may get in Kubernetes (impersonation mode; everything in service mode) */
  const readerAccess =
    (req: FastifyRequest): ReaderAccess =>
    (items, refOf) =>
      AccessReviewer.split(deps.reviewer, req.principal, items, refOf);
  const seenBy = async (req: FastifyRequest, v: PreviewView) =>
    response((await previewSeenBy(v, readerAccess(req))).view);
  const store = new PruneStore<PreviewDoc>(deps.store);
  store.onChange = (id, a) => deps.bus?.publish({ kind: 'prune', id, app: a });
  const staleMs = deps.pruneStaleMs ?? 120_000;
  // an ApplicationSet's shrink is a prune preview too (src/server/appsets): previews of it look it up by id
  const appsets = new AppSetService({
    catalog: deps.catalog,
    clusters: () =>
      deps.clusters
        .states()
        .filter((s) => s.status === 'connected')
        .map((s) => s.name),
    conn: (cluster) => managedCluster(deps.clusters, cluster).conn,
    dataDir: deps.dataDir,
  });
  const service = new PruneService(
    {
      recorder: deps.recorder,
      store,
      index,
      app: (id) => {
        deps.catalog.settleNow();
        return deps.catalog.get(id) ?? appsets.appOf(id);
      },
      conn: (cluster) => managedCluster(deps.clusters, cluster).conn,
      listed: (cluster) => deps.clusters.states().find((s) => s.name === cluster)?.status === 'connected',
      render: (a, user) => diffs.desired(a, user),
      envOfNamespace: (cluster, namespace) => deps.catalog.envOfNamespace(cluster, namespace),
      clusters: () =>
        deps.clusters
          .states()
          .filter((s) => s.status === 'connected')
          .map((s) => s.name),
    },
    { staleExecutionMs: staleMs },
  );
  // a prune this replica's previous process left mid-way is reported exactly (nothing is deleted again); so is
  // one of another replica that died (its journal idle longer than staleMs): checked again every staleMs / 2
  let recoverBusy = false;
  const recover = async () => {
    if (recoverBusy) return;
    recoverBusy = true;
    try {
      await service.recover();
    } catch (e) {
      app.log.error({ err: String(e) }, 'prune recovery failed');
    } finally {
      recoverBusy = false;
    }
  };
  let recovering: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    void recover();
    recovering = setInterval(() => void recover(), Math.max(1000, staleMs / 2));
    recovering.unref();
  });
  app.addHook('onClose', async () => clearInterval(recovering));
  app.addHook('onClose', async () => service.settled());

  app.post(
    '/api/apps/:cluster/:namespace/:kind/:name/prune-previews',
    { config: { access: { action: 'prune.request', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      return seenBy(req, await service.create(a, req.principal as Principal));
    },
  );

  appSetRoutes(app, deps, appsets, service, seenBy);

  /**
   * A preview of an app in an environment the user may not read, or (impersonation mode) of an app whose object its
   * Kubernetes RBAC does not let it get: a 403 recorded as access.denied, saying nothing of the app (issue 40).
   */
  const mustSeePreview = async (req: FastifyRequest, p: StoredPreview): Promise<void> => {
    const user = req.principal as Principal;
    const scope = { cluster: p.cluster, env: p.env, app: p.app };
    let reason = whyNot(user.grants, 'app.read', { cluster: p.cluster, env: p.env });
    if (!reason && !(await appVisibility(deps.reviewer, req)(p.app)))
      reason = `Kubernetes RBAC does not let ${user.name} get the object of ${p.app}`;
    if (!reason) return;
    recordDenial(deps.recorder, req, 'app.read', scope, reason);
    throw new HttpError(
      403,
      'Forbidden',
      "You need a role on this prune preview's environment, and access to its app, to see it",
    );
  };

  app.get('/api/prune-previews', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const { state, awaiting } = parsed(PreviewsQuery, req.query);
    const user = req.principal as Principal;
    // awaiting=me: only the pending previews this user may approve now, as the approve route decides (the
    // header's count); in impersonation mode only those they can see all of
    const mine = awaiting
      ? await service.awaiting(user, deps.reviewer ? readerAccess(req) : undefined)
      : await service.list(user, state);
    // in impersonation mode, only the previews of apps whose object the user's Kubernetes RBAC lets it get (issue 40)
    const list = await withVisibleApps(appVisibility(deps.reviewer, req), mine, (p) => p.app);
    return validated(PrunePreviewsResponse, {
      previews: list.map((p) => ({
        ...summaryOf(p),
        approvals: p.decisions.filter((d) => d.decision === 'approve').length,
      })),
    });
  });

  app.get('/api/prune-previews/:id', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const { id } = parsed(PrunePreviewParams, req.params);
    await mustSeePreview(req, await mustPreview(service.context, id));
    return seenBy(req, await service.view(id, req.principal as Principal));
  });

  for (const decision of ['approve', 'reject'] as const)
    app.post(
      `/api/prune-previews/:id/${decision}`,
      { config: { access: { action: 'prune.approve', scope: 'anywhere' } } },
      async (req) => {
        const { id } = parsed(PrunePreviewParams, req.params);
        const body = parsed(PruneDecisionBody, req.body ?? {});
        const user = req.principal as Principal;
        if (!user) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
        const onDenied = (reason: string, scope: { cluster: string; env: string; app: string }) =>
          recordDenial(deps.recorder, req, 'prune.approve', scope, reason);
        if (decision === 'approve' && deps.reviewer) {
          // the role, the requester and the state refuse first (service.decide); then seeing all of it
          const v = await service.view(id, user);
          if (v.viewer.canApprove) await mustSeeAllToApprove(v, readerAccess(req), onDenied);
        }
        return seenBy(req, await service.decide(id, user, { decision, ...body }, onDenied));
      },
    );
};
