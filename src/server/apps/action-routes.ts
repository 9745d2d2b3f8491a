// Mutations on apps. Each declares its action; the guard checks role, scope and CSRF.
// Routes are thin: parse, call one service function, validate the answer.
import type { FastifyPluginAsync } from 'fastify';
import { ReconcileResponse, ReconcileStatusQuery, ReconcileStatusResponse } from '../../api/schemas.ts';
import { recordDenial } from '../auth/index.ts';
import type { Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { appOf } from './app-of.ts';
import { parsed, validated } from '../http/respond.ts';
import { connectionFor, managedCluster } from '../auth/index.ts';
import { requestReconcile } from './reconcile.ts';
import { reconcileStatus } from './reconcile-status.ts';

export const actionRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.post(
    '/api/apps/:cluster/:namespace/:kind/:name/reconcile',
    { config: { access: { action: 'app.reconcile', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const user = req.principal as Principal;
      const result = await requestReconcile(a, user.name, {
        recorder: deps.recorder,
        conn: connectionFor(managedCluster(deps.clusters, a.cluster), deps.reviewer, user),
        onForbidden: (reason) =>
          recordDenial(deps.recorder, req, 'app.reconcile', { cluster: a.cluster, env: a.env, app: a.id }, reason),
      });
      return validated(ReconcileResponse, result);
    },
  );

  // what became of a request: polled by the SPA after "Reconcile now" until the controller acknowledges it
  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/reconcile-status',
    { config: { access: { action: 'app.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const { requestedAt } = parsed(ReconcileStatusQuery, req.query);
      return validated(
        ReconcileStatusResponse,
        reconcileStatus(a, requestedAt, { raw: (id) => deps.catalog.rawObject(id), drift: deps.drift }),
      );
    },
  );
};
