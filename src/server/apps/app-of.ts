import type { FastifyRequest } from 'fastify';
import { AppParams } from '../../api/schemas.ts';
import { appId, type App } from '../../domain/app.ts';
import type { AppCatalog } from './catalog.ts';
import { HttpError } from '../http/errors.ts';

/** What impersonation mode answers (auth's AccessReviewer): which of these apps the request's user may see. */
export interface VisibleApps {
  visibleApps(req: FastifyRequest, apps: App[]): Promise<App[]>;
}

/**
 * The app a route's `:cluster/:namespace/:kind/:name` names, with pending health updates applied, as this user
 * may see it (in impersonation mode: only if its Kubernetes RBAC lets it get the app object); 400 / 404 otherwise.
 */
export async function appOf(
  req: FastifyRequest,
  deps: { catalog: AppCatalog; reviewer?: VisibleApps | undefined },
): Promise<App> {
  const p = AppParams.safeParse(req.params);
  if (!p.success) throw new HttpError(400, 'BadRequest', 'invalid app id');
  const id = appId(p.data.cluster, p.data.namespace, p.data.kind, p.data.name);
  deps.catalog.settleNow();
  const a = deps.catalog.get(id);
  if (!a || (deps.reviewer && !(await deps.reviewer.visibleApps(req, [a])).length))
    throw new HttpError(404, 'NotFound', `no app ${id}`);
  return a;
}
