// The guided "Try it" page's API — sandbox mode only. Outside it (a console on a kubeconfig) none of these
// routes is registered: every /api/tryit path answers 404 from the catch-all.
//   GET  /api/tryit/scenarios          the cards, the running job, the newest job of each (signed in)
//   POST /api/tryit/scenarios/:id/run  starts a scenario: 202 with its job (developer, oncall or admin)
//   POST /api/tryit/reset              starts the reset to the seed: 202 with its job (developer, oncall or admin)
//   GET  /api/tryit/jobs/:id           a job with its steps (signed in): the page polls it for progress
// Running a scenario or the reset changes the shared sandbox's Git and clusters: the same roles as "Reconcile
// now" (app.reconcile), anywhere. Two at once: 409.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { can } from '../../domain/access.ts';
import { TryItJobParams, TryItJobResponse, TryItScenarioParams, TryItScenariosResponse } from '../../api/tryit.ts';
import type { Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { FreezeStore } from '../freeze/index.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { PruneStore, voidPendingPreview } from '../prune/index.ts';
import { SCENARIO_ACTOR, TryItService } from './service.ts';

const person = (req: FastifyRequest): Principal => {
  const p = req.principal;
  if (!p) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
  return p;
};

export const tryitRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const kit = deps.tryit;
  if (!kit) return; // not sandbox mode
  const freezes = new FreezeStore(deps.store);
  const previews = new PruneStore(deps.store);
  previews.onChange = (id, a) => deps.bus?.publish({ kind: 'prune', id, app: a });
  const service =
    deps.tryitService ??
    new TryItService({
      kit,
      recorder: deps.recorder,
      store: deps.store,
      pruneHoldOf: (appId) => deps.catalog.get(appId)?.pruneHold,
      // the reset: a preview planned on the state before it decided on objects the seed brings back or removes;
      // voided with a record each (after the reset's intent), never left waiting for a reviewer
      voidPendingPreviews: async (before, reason) => {
        let n = 0;
        for (const p of await previews.list('pending', 500))
          if (
            p.createdAt < before &&
            (await voidPendingPreview({ store: previews, recorder: deps.recorder }, p, reason, SCENARIO_ACTOR))
          )
            n++;
        return n;
      },
      activeFreezeOf: async (appId) =>
        (await freezes.list({ active: true })).find(
          (f) => f.status === 'active' && f.doc.targets.some((t) => t.appId === appId),
        )?.id,
      log: app.log,
    });
  app.addHook('onClose', async () => {
    await service.idle();
  });

  app.get('/api/tryit/scenarios', { config: { access: { signedIn: true } } }, async (req) => {
    const running = service.current();
    return validated(TryItScenariosResponse, {
      scenarios: service.cards(),
      canRun: can(person(req).grants, 'app.reconcile'),
      ...(running ? { running } : {}),
      recent: service.recent(),
    });
  });

  app.get('/api/tryit/jobs/:id', { config: { access: { signedIn: true } } }, async (req) => {
    const { id } = parsed(TryItJobParams, req.params);
    const job = service.job(id);
    if (!job) throw new HttpError(404, 'NotFound', `no job ${id}`);
    return validated(TryItJobResponse, { job });
  });

  app.post(
    '/api/tryit/scenarios/:id/run',
    { config: { access: { action: 'app.reconcile', scope: 'anywhere' } } },
    async (req, rep) => {
      const { id } = parsed(TryItScenarioParams, req.params);
      const job = await service.run(id, person(req).name);
      return rep.code(202).send(validated(TryItJobResponse, { job }));
    },
  );

  app.post(
    '/api/tryit/reset',
    { config: { access: { action: 'app.reconcile', scope: 'anywhere' } } },
    async (req, rep) => {
      const job = await service.reset(person(req).name);
      return rep.code(202).send(validated(TryItJobResponse, { job }));
    },
  );
};
