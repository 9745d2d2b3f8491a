// Break-glass over HTTP (issue 43, decision 0026): list the requests the reader may see, ask for one through a
// window in force (developer, on-call or admin on the app's environment), approve one (on-call or admin there,
// never the person who asked). Both writes are actions (break-glass.ts records their intent first).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  BreakGlassBody,
  BreakGlassListResponse,
  BreakGlassParams,
  BreakGlassResponse,
  FreezeWindowParams,
  type BreakGlassDto,
} from '../../api/schemas.ts';
import { can, type Action } from '../../domain/access.ts';
import { allowed, recordDenial, type Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import type { BreakGlassService, BreakGlassUser } from './break-glass.ts';
import type { BreakGlass, BreakGlassStore } from './break-glass-store.ts';

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

function dto(b: BreakGlass): BreakGlassDto {
  return {
    id: b.id,
    window: b.window,
    app: b.app,
    cluster: b.cluster,
    env: b.env,
    reason: b.reason,
    minutes: b.minutes,
    requestedBy: b.requestedBy,
    requestedAt: b.requestedAt,
    state: b.state,
    approvedBy: b.approvedBy,
    approvedAt: b.approvedAt,
    until: iso(b.until),
    occurrenceUntil: new Date(b.endsAt).toISOString(),
    endedAt: b.endedAt,
    note: b.note,
  };
}

function userOf(req: FastifyRequest, deps: AppDeps, action: Action): BreakGlassUser {
  const principal = req.principal as Principal | undefined;
  if (!principal) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
  return {
    principal,
    may: (cluster, env) => can(principal.grants, action, { cluster, env }),
    denied: (cluster, env, app, reason) => recordDenial(deps.recorder, req, action, { cluster, env, app }, reason),
  };
}

export function registerBreakGlassRoutes(
  app: FastifyInstance,
  deps: AppDeps,
  b: { service: BreakGlassService; store: BreakGlassStore },
): void {
  app.get('/api/break-glass', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const requests = (await b.store.list({ limit: 200 }))
      .filter((x) => allowed(req, 'app.read', { cluster: x.cluster, env: x.env }))
      .map(dto);
    return validated(BreakGlassListResponse, { requests });
  });

  app.post(
    '/api/freeze-windows/:name/break-glass',
    { config: { access: { action: 'app.reconcile', scope: 'anywhere' } } },
    async (req) => {
      const { name } = parsed(FreezeWindowParams, req.params);
      const body = parsed(BreakGlassBody, req.body ?? {});
      const made = await b.service.request(name, userOf(req, deps, 'app.reconcile'), body);
      return validated(BreakGlassResponse, { breakGlass: dto(made) });
    },
  );

  app.post(
    '/api/break-glass/:id/approve',
    { config: { access: { action: 'freeze.toggle', scope: 'anywhere' } } },
    async (req) => {
      const { id } = parsed(BreakGlassParams, req.params);
      const done = await b.service.approve(id, userOf(req, deps, 'freeze.toggle'));
      return validated(BreakGlassResponse, { breakGlass: dto(done) });
    },
  );
}
