// Planned freeze windows over HTTP (issue 43): list them with what each means now, make one, delete one with a
// reason. Making or deleting is an action with its intent recorded first (`window.created`, `window.deleted`). Who
// may: on-call (freeze.toggle) on every environment the window covers now, and on every environment of every
// cluster when it covers no app yet (a window for apps still to come is a platform-wide decision). The scheduler
// (window-scheduler.ts) starts the occurrences on the replica that holds the Lease.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  FreezeWindowCreateBody,
  FreezeWindowDeleteBody,
  FreezeWindowParams,
  FreezeWindowResponse,
  FreezeWindowsResponse,
  type FreezeWindowDto,
} from '../../api/schemas.ts';
import { can } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import { windowCovers, windowErrors, windowState, type FreezeWindowSpec } from '../../domain/freeze-windows.ts';
import { allowed, recordDenial, type Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import type { StoredWindow, WindowStore } from './window-store.ts';

export interface WindowRouteDeps {
  store: WindowStore;
  apps: () => App[];
  labels: (appId: string) => Record<string, string> | undefined;
  now?: () => number;
}

const iso = (t: number) => new Date(t).toISOString();

/** The window as the reader sees it: its state now, and the apps it covers that they may read. */
function dto(req: FastifyRequest, w: StoredWindow, covered: App[], now: number): FreezeWindowDto {
  const st = windowState([w.spec], now);
  const { name, reason, scope, start, end, cron, timeZone, minutes } = w.spec;
  return {
    name,
    reason,
    scope,
    ...(start !== undefined ? { start } : {}),
    ...(end !== undefined ? { end } : {}),
    ...(cron !== undefined ? { cron } : {}),
    ...(timeZone !== undefined ? { timeZone } : {}),
    ...(minutes !== undefined ? { minutes } : {}),
    createdBy: w.createdBy,
    createdAt: w.createdAt,
    active: st.active ? { from: iso(st.active.from), until: iso(st.active.until), atLeast: st.atLeast } : null,
    next: st.next ? { from: iso(st.next.from), until: iso(st.next.until) } : null,
    apps: covered.filter((a) => allowed(req, 'app.read', { cluster: a.cluster, env: a.env })).map((a) => a.id),
  };
}

export function registerWindowRoutes(app: FastifyInstance, deps: AppDeps, w: WindowRouteDeps): void {
  const now = () => w.now?.() ?? Date.now();
  const covered = (spec: Pick<FreezeWindowSpec, 'scope'>) =>
    w.apps().filter((a) => windowCovers(spec, { ...a, labels: w.labels(a.id) }));
  /** 403 unless the user may freeze every environment the window covers (all of them when it covers no app yet) */
  const mustMay = (req: FastifyRequest, spec: Pick<FreezeWindowSpec, 'scope' | 'name'>) => {
    const user = req.principal as Principal | undefined;
    if (!user) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
    const apps = covered(spec);
    const pairs = new Map<string, { cluster: string; env: string }>();
    for (const a of apps.length ? apps : w.apps())
      pairs.set(`${a.cluster}/${a.env}`, { cluster: a.cluster, env: a.env });
    for (const p of pairs.values())
      if (!can(user.grants, 'freeze.toggle', p)) {
        const why = apps.length
          ? `You need the oncall role on ${p.cluster}/${p.env} to plan a freeze window covering it`
          : `A window that covers no app yet needs the oncall role everywhere (not on ${p.cluster}/${p.env})`;
        recordDenial(deps.recorder, req, 'freeze.toggle', p, `${why} (window ${spec.name})`);
        throw new HttpError(403, 'Forbidden', why);
      }
    return { user, apps };
  };

  app.get('/api/freeze-windows', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const t = now();
    const windows = (await w.store.list()).map((s) => dto(req, s, covered(s.spec), t));
    return validated(FreezeWindowsResponse, { windows });
  });

  app.post(
    '/api/freeze-windows',
    { config: { access: { action: 'freeze.toggle', scope: 'anywhere' } } },
    async (req) => {
      const body = parsed(FreezeWindowCreateBody, req.body ?? {});
      const spec: FreezeWindowSpec = { ...body, reason: body.reason.trim() };
      const t = now();
      const errors = windowErrors(spec, t);
      if (errors.length)
        throw new HttpError(400, 'BadRequest', errors.map((e) => `${e.field}: ${e.message}`).join('; '));
      const { user, apps } = mustMay(req, spec);
      if (await w.store.get(spec.name))
        throw new HttpError(409, 'Conflict', `a window named ${spec.name} exists (or existed): choose another name`);
      const at = iso(t);
      await deps.recorder.act(
        {
          time: at,
          type: 'window.created',
          actor: user.name,
          app: null,
          cluster: null,
          env: null,
          data: { window: spec.name, reason: spec.reason, spec, appsNow: apps.map((a) => a.id) },
        },
        async () => {
          if (!(await w.store.create(spec, user.name, at)))
            throw new HttpError(409, 'Conflict', `a window named ${spec.name} exists: choose another name`);
        },
      );
      const stored = await w.store.get(spec.name);
      if (!stored) throw new HttpError(500, 'Internal', `window ${spec.name} not found after it was made`);
      return validated(FreezeWindowResponse, { window: dto(req, stored, apps, t) });
    },
  );

  app.post(
    '/api/freeze-windows/:name/delete',
    { config: { access: { action: 'freeze.toggle', scope: 'anywhere' } } },
    async (req) => {
      const { name } = parsed(FreezeWindowParams, req.params);
      const { reason } = parsed(FreezeWindowDeleteBody, req.body ?? {});
      if (!reason.trim()) throw new HttpError(400, 'BadRequest', 'reason: say why the window goes');
      const stored = await w.store.get(name);
      if (!stored || stored.deleted) throw new HttpError(404, 'NotFound', `no window ${name}`);
      const { user, apps } = mustMay(req, stored.spec);
      const t = now();
      const st = windowState([stored.spec], t);
      await deps.recorder.act(
        {
          time: iso(t),
          type: 'window.deleted',
          actor: user.name,
          app: null,
          cluster: null,
          env: null,
          // an occurrence in force: its freezes stay until their expiry (end them on their pages)
          data: { window: name, reason: reason.trim(), activeUntil: st.active ? iso(st.active.until) : null },
        },
        async () => {
          if (!(await w.store.delete(name, user.name, reason.trim(), iso(t))))
            throw new HttpError(409, 'Conflict', `window ${name} was deleted meanwhile`);
        },
      );
      return validated(FreezeWindowResponse, { window: dto(req, { ...stored, deleted: null }, apps, t) });
    },
  );
}
