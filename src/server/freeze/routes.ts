// Incident freezes: freeze (oncall, admin), list / read (everyone who can see the frozen apps), the live
// changes since the freeze began, extend, end with a decision per change. Thin: parse, call the service,
// validate. Role and scope come from the session and the store, never from the body. In impersonation mode the
// changes (computed with the console's identity) are shown as the reader's Kubernetes RBAC lets them be seen
// (read.ts changesSeenBy), and a write-back may only name a change its author can see.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  FreezeChangesResponse,
  FreezeCreateBody,
  FreezeEndBody,
  FreezeExtendBody,
  FreezeParams,
  FreezeResponse,
  FreezesQuery,
  FreezesResponse,
  type FreezeDto,
} from '../../api/schemas.ts';
import { can } from '../../domain/access.ts';
import { AccessReviewer, allowed, recordDenial } from '../auth/index.ts';
import type { Principal } from '../auth/index.ts';
import { freezeMinSeconds } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { connectionFor, managedCluster } from '../auth/index.ts';
import { DiffService } from '../diff/index.ts';
import { changesSeenBy, hiddenWriteBack, type ReaderAccess } from './read.ts';
import { FreezeService, type FreezeActor, type FreezeView } from './service.ts';
import { writeBackToGit } from './writeback.ts';
import { FreezeStore } from './store.ts';

function actorOf(req: FastifyRequest, deps: AppDeps): FreezeActor & { principal: Principal } {
  const user = req.principal as Principal;
  if (!user) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
  return {
    name: user.name,
    principal: user,
    may: (cluster, env) => can(user.grants, 'freeze.toggle', { cluster, env }),
    denied: (cluster, env, app, reason) =>
      recordDenial(deps.recorder, req, 'freeze.toggle', { cluster, env, ...(app ? { app } : {}) }, reason),
  };
}

const visible = (req: FastifyRequest, f: FreezeView) =>
  f.doc.targets.length
    ? f.doc.targets.some((t) => allowed(req, 'app.read', { cluster: f.cluster, env: t.env }))
    : allowed(req, 'app.read', { cluster: f.cluster, ...(f.env ? { env: f.env } : {}) });

function dto(req: FastifyRequest, f: FreezeView): FreezeDto {
  const user = req.principal as Principal;
  return {
    id: f.id,
    cluster: f.cluster,
    env: f.env,
    app: f.app,
    status: f.status,
    active: f.active,
    reason: f.reason,
    incident: f.incident,
    createdBy: f.createdBy,
    createdAt: f.createdAt,
    startedAt: f.doc.startedAt,
    expiresAt: f.expiresAt,
    endedAt: f.endedAt,
    endedBy: f.endedBy,
    endReason: f.endReason,
    targets: f.doc.targets,
    extensions: f.doc.extensions,
    ...(f.doc.decisions ? { decisions: f.doc.decisions } : {}),
    ...(f.doc.writeBack ? { writeBack: f.doc.writeBack } : {}),
    canEnd:
      f.active && f.doc.targets.every((t) => can(user.grants, 'freeze.toggle', { cluster: f.cluster, env: t.env })),
  };
}

export const freezeRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const diffs = new DiffService(deps);
  /** what the signed-in user may get in Kubernetes (impersonation mode; everything in service mode) */
  const readerAccess =
    (req: FastifyRequest): ReaderAccess =>
    (items, refOf) =>
      AccessReviewer.split(deps.reviewer, req.principal, items, refOf);
  const store = new FreezeStore(deps.store);
  store.onChange = (id, a) => deps.bus?.publish({ kind: 'freeze', id, app: a });
  const service = new FreezeService({
    recorder: deps.recorder,
    store,
    apps: {
      get: (id) => {
        deps.catalog.settleNow();
        return deps.catalog.get(id);
      },
      list: () => {
        deps.catalog.settleNow();
        return deps.catalog.list();
      },
      raw: (id) => deps.catalog.rawObject(id) as Record<string, unknown> | undefined,
    },
    conn: (cluster, user) => {
      const mc = managedCluster(deps.clusters, cluster);
      const p = (user as (FreezeActor & { principal?: Principal }) | undefined)?.principal;
      return connectionFor(mc, deps.reviewer, p);
    },
    diff: (a) => diffs.diff(a, undefined),
    writeBack: async (a, req) => {
      if (!a.source.url) throw new Error(`${a.name} names no Git repository`);
      if (a.controller === 'flux' && a.source.kind && a.source.kind !== 'GitRepository')
        throw new Error(`${a.name} is rendered from a ${a.source.kind}, not a Git repository`);
      // a repository whose host has a forge configured gets a pull request; otherwise a branch is pushed
      const forge = deps.forges?.forRepoUrl(a.source.url);
      const r = await writeBackToGit({
        repoUrl: a.source.url,
        baseBranch: a.source.ref && a.source.ref !== 'HEAD' ? a.source.ref : 'main',
        appPath: a.source.path ?? '.',
        branch: req.branch,
        message: req.message,
        author: { name: req.author, email: `${req.author.replace(/[^A-Za-z0-9._-]/g, '_')}@users.gitops-console` },
        changes: req.changes.map((c) => ({
          id: c.id,
          ref: { group: c.ref.group ?? '', kind: c.ref.kind, namespace: c.ref.namespace ?? null, name: c.ref.name },
          path: c.path,
          liveValue: c.live,
          gitValue: c.git,
        })),
        ...(forge?.ok ? { forge: forge.value } : {}),
      });
      return r;
    },
    log: app.log,
    minSeconds: freezeMinSeconds(),
  });
  let resuming: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    service.recover().catch((e: unknown) => app.log.error({ err: String(e) }, 'freeze recovery failed'));
    // an end another replica left half-done when it died
    resuming = setInterval(
      () => service.resumeStale().catch((e: unknown) => app.log.warn({ err: String(e) }, 'freeze: resuming failed')),
      30_000,
    );
    resuming.unref();
  });
  app.addHook('onClose', async () => clearInterval(resuming));
  // a freeze another replica started or changed gets its expiry timer here too: whichever replica fires
  // first ends it (the status transition lets one win), so a freeze still ends on time when its replica dies
  const offBus = deps.bus?.on((e) => {
    if (e.origin === deps.bus?.replica) return;
    if (e.change.kind === 'freeze')
      service
        .rearm(e.change.id)
        .catch((err: unknown) => app.log.warn({ err: String(err), freeze: e.change }, 'freeze: re-arming failed'));
    if (e.change.kind === 'resync')
      service.rearmAll().catch((err: unknown) => app.log.warn({ err: String(err) }, 'freeze: re-arming failed'));
  });
  app.addHook('onClose', async () => offBus?.());
  app.addHook('onClose', async () => service.settled());
  const onApp = (ev: { type: 'upsert'; app: { id: string } } | { type: 'delete'; id: string }) => {
    const id = ev.type === 'upsert' ? ev.app.id : ev.id;
    service
      .observe(id, ev.type === 'delete')
      .catch((e: unknown) => app.log.warn({ err: String(e), app: id }, 'freeze: out-of-band check failed'));
  };
  deps.catalog.on('app', onApp);
  app.addHook('onClose', async () => {
    deps.catalog.off('app', onApp);
  });

  app.post('/api/freezes', { config: { access: { action: 'freeze.toggle', scope: 'anywhere' } } }, async (req) => {
    const body = parsed(FreezeCreateBody, req.body ?? {});
    const f = await service.create(actorOf(req, deps), body);
    return validated(FreezeResponse, { freeze: dto(req, f) });
  });

  app.get('/api/freezes', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const { active } = parsed(FreezesQuery, req.query);
    const list = (await service.list(active)).filter((f) => visible(req, f));
    return validated(FreezesResponse, { freezes: list.map((f) => dto(req, f)) });
  });

  const visibleFreeze = async (req: FastifyRequest) => {
    const { id } = parsed(FreezeParams, req.params);
    const f = await service.view(id);
    if (!visible(req, f)) throw new HttpError(404, 'NotFound', `no freeze ${id}`);
    return f;
  };

  app.get('/api/freezes/:id', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) =>
    validated(FreezeResponse, { freeze: dto(req, await visibleFreeze(req)) }),
  );

  app.get(
    '/api/freezes/:id/changes',
    { config: { access: { action: 'app.read', scope: 'anywhere' } } },
    async (req) => {
      const f = await visibleFreeze(req);
      const { changes, unknown } = await changesSeenBy(await service.changes(f.id), readerAccess(req));
      return validated(FreezeChangesResponse, { changes, unknown });
    },
  );

  app.post(
    '/api/freezes/:id/extend',
    { config: { access: { action: 'freeze.toggle', scope: 'anywhere' } } },
    async (req) => {
      const f = await visibleFreeze(req);
      const body = parsed(FreezeExtendBody, req.body ?? {});
      return validated(FreezeResponse, { freeze: dto(req, await service.extend(f.id, actorOf(req, deps), body)) });
    },
  );

  app.post(
    '/api/freezes/:id/end',
    { config: { access: { action: 'freeze.toggle', scope: 'anywhere' } } },
    async (req) => {
      const f = await visibleFreeze(req);
      const body = parsed(FreezeEndBody, req.body ?? {});
      if (deps.reviewer && body.decisions.some((d) => d.action === 'write-back')) {
        // writing a value back to Git shows it to whoever reads the branch: only a change its author can see
        const refused = await hiddenWriteBack(await service.changes(f.id), readerAccess(req), body.decisions);
        if (refused) {
          const env = f.doc.targets.find((t) => t.appId === refused.appId)?.env ?? f.env ?? '';
          recordDenial(
            deps.recorder,
            req,
            'freeze.toggle',
            { cluster: f.cluster, env, app: refused.appId },
            refused.reason,
          );
          throw new HttpError(403, 'Forbidden', refused.reason);
        }
      }
      return validated(FreezeResponse, {
        freeze: dto(req, await service.end(f.id, actorOf(req, deps), body.decisions)),
      });
    },
  );
};
