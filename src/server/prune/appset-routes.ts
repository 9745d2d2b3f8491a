// ApplicationSets (issue 24): their list (the overview groups Applications under them), one ApplicationSet's page
// (generators' parameters now, its Applications, the shrink the controller would carry out) and the request of a
// prune preview of its shrink. The preview is then one of the prune previews (src/server/prune): the same queue,
// page, approvals and execution. An ApplicationSet's generators reach every environment of its cluster: seeing it
// needs a role on every environment its Applications run in (on every environment of the cluster while it owns none,
// or one the console does not know: issue 40) and, in impersonation mode, Kubernetes RBAC that lets the reader get
// it and its Applications; requesting (and approving, by the preview's environment `*`) its shrink a role on every
// environment of the cluster. The list leaves out what the reader may not see; one ApplicationSet is a 403 recorded
// as access.denied, saying nothing of where its Applications run.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { can, whyNot } from '../../domain/access.ts';
import type { AppSetSummary, AppSetsResponse, AppSetView } from '../../api/appsets.ts';
import { recordDenial, type AccessReviewer, type Principal } from '../auth/index.ts';
import { KINDS } from '../kube/kinds.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed } from '../http/respond.ts';
import type { PreviewView } from './model.ts';
import type { PruneService } from './service.ts';
import { AppSetService } from './appsets.ts';

export const AppSetParams = z.object({
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
  /** why this reader may not see the ApplicationSet (undefined: they may), for the evidence */
  const whyHidden = async (req: FastifyRequest, s: AppSetSummary): Promise<string | undefined> => {
    const user = req.principal as Principal;
    deps.catalog.settleNow();
    // the environments its Applications run in; every one ('*') while it owns none, or one the console does not know
    const envs = s.applications.length
      ? [...new Set(s.applications.map((x) => deps.catalog.get(x.appId)?.env ?? '*'))]
      : ['*'];
    const missing = envs.filter((env) => !can(user.grants, 'app.read', { cluster: s.cluster, env }));
    if (missing.length)
      return `You need a role on every environment its Applications run in to see this ApplicationSet (${missing.map((e) => (e === '*' ? `every environment of ${s.cluster}` : `${s.cluster}/${e}`)).join(', ')})`;
    if (!deps.reviewer) return undefined;
    const get = (kind: 'ApplicationSet' | 'Application') =>
      (deps.reviewer as AccessReviewer).mayGet(user, {
        cluster: s.cluster,
        group: KINDS[kind].group,
        version: KINDS[kind].version,
        kind,
        namespace: s.namespace,
      });
    for (const kind of ['ApplicationSet', ...(s.applications.length ? ['Application' as const] : [])] as const)
      if ((await get(kind)) !== 'allowed')
        return `Kubernetes RBAC does not let ${user.name} get ${KINDS[kind].plural}.${KINDS[kind].group} in ${s.namespace} on ${s.cluster}`;
    return undefined;
  };
  const refuse = (req: FastifyRequest, p: z.infer<typeof AppSetParams>, reason: string): never => {
    recordDenial(
      deps.recorder,
      req,
      'app.read',
      { cluster: p.cluster, app: AppSetService.idOf(p.cluster, p.namespace, p.name) },
      reason,
    );
    throw new HttpError(
      403,
      'Forbidden',
      `You need a role on every environment this ApplicationSet's Applications run in on ${p.cluster} (and, where the console asks Kubernetes, access to it and its Applications) to see it`,
    );
  };

  app.get('/api/appsets', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const user = req.principal as Principal;
    const r = await appsets.list();
    const readable: AppSetsResponse['appsets'] = [];
    for (const s of r.appsets)
      if (can(user.grants, 'app.read', { cluster: s.cluster }) && !(await whyHidden(req, s))) readable.push(s);
    const out: AppSetsResponse = { appsets: readable, unknown: r.unknown };
    return out;
  });

  app.get(
    '/api/appsets/:cluster/:namespace/:name',
    { config: { access: { action: 'app.read', scope: 'cluster' } } },
    async (req) => {
      const p = parsed(AppSetParams, req.params);
      const user = req.principal as Principal;
      let appset: AppSetView;
      try {
        appset = await appsets.view(p.cluster, p.namespace, p.name);
      } catch (e) {
        // one the cluster does not have: said only to someone who may see whatever it could be (as for apps)
        if (
          e instanceof HttpError &&
          e.status === 404 &&
          !can(user.grants, 'app.read', { cluster: p.cluster, env: '*' })
        )
          refuse(
            req,
            p,
            `${whyNot(user.grants, 'app.read', { cluster: p.cluster, env: '*' }) ?? 'not allowed'} (an ApplicationSet the console does not know)`,
          );
        throw e;
      }
      const why = await whyHidden(req, appset);
      if (why) refuse(req, p, why);
      return { appset };
    },
  );

  app.post(
    '/api/appsets/:cluster/:namespace/:name/prune-previews',
    { config: { access: { action: 'prune.request', scope: 'cluster' } } },
    async (req) => {
      const p = parsed(AppSetParams, req.params);
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
