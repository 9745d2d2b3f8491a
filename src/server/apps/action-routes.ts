// Mutations on apps. Each declares its action; the guard checks role, scope and CSRF.
// Routes are thin: parse, call one service function, validate the answer.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ReconcileResponse, ReconcileStatusQuery, ReconcileStatusResponse } from '../../api/schemas.ts';
import { recordDenial } from '../auth/index.ts';
import type { Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { appOf } from './app-of.ts';
import { parsed, validated } from '../http/respond.ts';
import { connectionFor, managedCluster } from '../auth/index.ts';
import { requestReconcile } from './reconcile.ts';
import { reconcileStatus } from './reconcile-status.ts';
import { controlRollout, ROLLOUT_VERBS } from './rollout-actions.ts';
import { controlFlaggerCanary, FLAGGER_VERBS } from './flagger-actions.ts';
import { gatePolicy } from './flagger-gate.ts';
import { DEFAULT_ROLLOUT_ONCALL_ENVS, whyNotRolloutControl } from '../../domain/access.ts';
import { HttpError } from '../http/errors.ts';
import { z } from 'zod';

export const RolloutActionParams = z.object({
  rolloutNamespace: z.string().min(1).max(253),
  rollout: z.string().min(1).max(253),
  verb: z.enum(ROLLOUT_VERBS),
});
export const FlaggerActionParams = z.object({
  canaryNamespace: z.string().min(1).max(253),
  canary: z.string().min(1).max(253),
  verb: z.enum(FLAGGER_VERBS),
});
/** a reason is required: it is the record of why a canary was overridden */
export const RolloutActionBody = z.object({ reason: z.string().trim().min(3, 'a reason is required').max(500) });

export const actionRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  // the Flagger load tester hosts the console may open gates on (CONSOLE_FLAGGER_GATE_HOSTS; none when unset)
  const gates = gatePolicy(deps.flaggerGateHosts ?? []);
  /**
   * What a canary action (Argo Rollouts or Flagger) needs first: the app, a reason, and the role rule of
   * `rollout.control` (on-call only in the on-call environments), a denial recorded; then the user's connection.
   */
  const canaryControl = async (req: FastifyRequest) => {
    const a = await appOf(req, deps);
    const user = req.principal as Principal;
    const { reason } = parsed(RolloutActionBody, req.body ?? {});
    const scope = { cluster: a.cluster, env: a.env };
    const why = whyNotRolloutControl(user.grants, scope, deps.rolloutOncallEnvs ?? DEFAULT_ROLLOUT_ONCALL_ENVS);
    if (why) {
      recordDenial(deps.recorder, req, 'rollout.control', { ...scope, app: a.id }, why);
      throw new HttpError(403, 'Forbidden', why);
    }
    return {
      app: a,
      reason,
      actor: user.name,
      recorder: deps.recorder,
      conn: connectionFor(managedCluster(deps.clusters, a.cluster), deps.reviewer, user),
    };
  };

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
        ...(deps.catalog.rawObject(a.id) ? { appObject: deps.catalog.rawObject(a.id) } : {}),
      });
      return validated(ReconcileResponse, result);
    },
  );

  // an Argo Rollouts canary: promote, promote-full, abort, retry, pause, resume (rollout-actions.ts)
  app.post(
    '/api/apps/:cluster/:namespace/:kind/:name/rollouts/:rolloutNamespace/:rollout/:verb',
    { config: { access: { action: 'rollout.control', scope: 'app' } } },
    async (req) => {
      const p = parsed(RolloutActionParams, req.params);
      const c = await canaryControl(req);
      return controlRollout(c.app, { namespace: p.rolloutNamespace, name: p.rollout }, p.verb, c.reason, c.actor, c);
    },
  );

  // a Flagger canary: promote (its confirm-promotion gate), rollback (its rollback gate) (flagger-actions.ts)
  app.post(
    '/api/apps/:cluster/:namespace/:kind/:name/canaries/:canaryNamespace/:canary/:verb',
    { config: { access: { action: 'rollout.control', scope: 'app' } } },
    async (req) => {
      const p = parsed(FlaggerActionParams, req.params);
      const c = await canaryControl(req);
      return controlFlaggerCanary(c.app, { namespace: p.canaryNamespace, name: p.canary }, p.verb, c.reason, c.actor, {
        ...c,
        gates,
      });
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
