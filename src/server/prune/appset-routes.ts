// ApplicationSets (issue 24): their list (the overview groups Applications under them), one ApplicationSet's page
// (generators' parameters now, its Applications, the shrink the controller would carry out) and the request of a
// prune preview of its shrink. The preview is then one of the prune previews (src/server/prune): the same queue,
// page, approvals and execution. An ApplicationSet's generators reach every environment of its cluster: seeing it
// needs a role on the cluster, requesting (and approving, by the preview's environment `*`) its shrink a role on
// every environment of the cluster.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { can, whyNot } from '../../domain/access.ts';
import type { AppSetsResponse } from '../../api/appsets.ts';
import { recordDenial, type Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed } from '../http/respond.ts';
import type { PreviewView } from './model.ts';
import type { PruneService } from './service.ts';
import type { AppSetService } from './appsets.ts';

const Params = z.object({
  cluster: z.string().min(1).max(253),
  namespace: z.string().min(1).max(253),
  name: z.string().min(1).max(253),
});

export function appSetRoutes(
  app: FastifyInstance,
  deps: AppDeps,
  appsets: AppSetService,
  prune: PruneService,
  respond: (req: FastifyRequest, v: PreviewView) => Promise<unknown>,
): void {
  app.get('/api/appsets', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const user = req.principal as Principal;
    const r = await appsets.list();
    const out: AppSetsResponse = {
      appsets: r.appsets.filter((s) => can(user.grants, 'app.read', { cluster: s.cluster })),
      unknown: r.unknown,
    };
    return out;
  });

  app.get(
    '/api/appsets/:cluster/:namespace/:name',
    { config: { access: { action: 'app.read', scope: 'cluster' } } },
    async (req) => {
      const p = parsed(Params, req.params);
      return { appset: await appsets.view(p.cluster, p.namespace, p.name) };
    },
  );

  app.post(
    '/api/appsets/:cluster/:namespace/:name/prune-previews',
    { config: { access: { action: 'prune.request', scope: 'cluster' } } },
    async (req) => {
      const p = parsed(Params, req.params);
      const user = req.principal as Principal;
      const scope = { cluster: p.cluster, env: '*' };
      if (!can(user.grants, 'prune.request', scope)) {
        const reason = `${whyNot(user.grants, 'prune.request', scope) ?? 'not allowed'} (an ApplicationSet's shrink reaches every environment of ${p.cluster})`;
        recordDenial(
          deps.recorder,
          req,
          'prune.request',
          { ...scope, app: `${p.cluster}/${p.namespace}/applicationset/${p.name}` },
          reason,
        );
        throw new HttpError(403, 'Forbidden', reason);
      }
      const { app: a, doc } = await appsets.planShrink(prune.context, p.cluster, p.namespace, p.name);
      return respond(req, await prune.createPlanned(a, user, doc));
    },
  );
}
