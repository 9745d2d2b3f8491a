// Mutations on apps. Each declares its action; the guard checks role, scope and CSRF.
import type { FastifyPluginAsync } from 'fastify';
import { ReconcileResponse } from '../../api/schemas.ts';
import { appOf, HttpError, reply, type AppDeps } from '../app.ts';
import type { Principal } from '../auth/sessions.ts';
import { AccessReviewer } from '../kube/access-review.ts';
import { recordDenial } from '../auth/guard.ts';
import { KubeError } from '../kube/connection.ts';
import { KINDS } from '../kube/kinds.ts';

export const actionRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  /**
   * "Reconcile now": asks the controller to reconcile without waiting for its interval —
   * Flux: `reconcile.fluxcd.io/requestedAt` on the app and its source; Argo CD: a refresh.
   * It changes no desired state; what is applied still comes from Git.
   */
  app.post(
    '/api/apps/:cluster/:namespace/:kind/:name/reconcile',
    { config: { access: { action: 'app.reconcile', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const mc = deps.clusters.clusters.get(a.cluster);
      if (!mc) throw new HttpError(404, 'NotFound', `no cluster ${a.cluster}`);
      const user = req.principal as Principal;
      const conn = deps.reviewer ? mc.conn.withHeaders(AccessReviewer.headers(user)) : mc.conn;
      const now = new Date().toISOString();
      const targets: Array<{ kind: keyof typeof KINDS; namespace: string; name: string; annotations: object }> = [];
      if (a.controller === 'flux') {
        targets.push({
          kind: a.kind,
          namespace: a.namespace,
          name: a.name,
          annotations: { 'reconcile.fluxcd.io/requestedAt': now },
        });
        if (a.source.kind && a.source.name && a.source.kind in KINDS)
          targets.push({
            kind: a.source.kind as keyof typeof KINDS,
            namespace: a.namespace,
            name: a.source.name,
            annotations: { 'reconcile.fluxcd.io/requestedAt': now },
          });
      } else {
        targets.push({
          kind: 'Application',
          namespace: a.namespace,
          name: a.name,
          annotations: { 'argocd.argoproj.io/refresh': 'normal' },
        });
      }
      const done: string[] = [];
      for (const t of targets) {
        const k = KINDS[t.kind];
        const path = `/apis/${k.group}/${k.version}/namespaces/${encodeURIComponent(t.namespace)}/${k.plural}/${encodeURIComponent(t.name)}?fieldManager=gitops-console`;
        try {
          await conn.json('PATCH', path, {
            body: JSON.stringify({ metadata: { annotations: t.annotations } }),
            contentType: 'application/merge-patch+json',
            timeoutMs: 10_000,
          });
          done.push(`${t.kind}/${t.namespace}/${t.name}`);
        } catch (e) {
          if (e instanceof KubeError) {
            if (e.status === 403)
              await recordDenial(
                deps.store,
                req,
                'app.reconcile',
                { cluster: a.cluster, env: a.env, app: a.id },
                e.message,
              );
            const status = e.status === 403 ? 403 : e.status === 404 ? 404 : e.status === 409 ? 409 : 502;
            throw new HttpError(
              status,
              status === 403 ? 'Forbidden' : 'ClusterError',
              `cannot annotate ${t.kind} ${t.name}: ${e.message}`,
              a.cluster,
            );
          }
          throw e;
        }
      }
      await deps.store.append({
        time: now,
        type: 'app.reconcile-requested',
        actor: user.name,
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        data: { objects: done, revisionObserved: a.source.revisionObserved ?? null },
      });
      return reply(ReconcileResponse, { requestedAt: now, objects: done });
    },
  );
};
