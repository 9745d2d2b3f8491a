// Incident freezes: freeze (oncall, admin), list / read (everyone who can see the frozen apps), the live
// changes since the freeze began, extend, end with a decision per change. Thin: parse, call the service,
// validate. Role and scope come from the session and the store, never from the body. In impersonation mode the
// changes (computed with the console's identity) are shown as the reader's Kubernetes RBAC lets them be seen
// (read.ts changesSeenBy), and a write-back may only name a change its author can see. A freeze shows only the apps
// the reader may see (their environment, and in impersonation mode Kubernetes RBAC on the app's object); one with
// none of them is left out of the list, and read by id it is a 403 recorded as access.denied (issue 40).
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
import { can, whyNot } from '../../domain/access.ts';
import { AccessReviewer, allowed, appVisibility, envFilter, recordDenial } from '../auth/index.ts';
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
import { BreakGlassService } from './break-glass.ts';
import { registerBreakGlassRoutes } from './break-glass-routes.ts';
import { BreakGlassStore } from './break-glass-store.ts';
import { registerCalendarRoutes } from './calendar-routes.ts';
import { registerWindowRoutes } from './window-routes.ts';
import { WindowScheduler } from './window-scheduler.ts';
import { WindowStore } from './window-store.ts';

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

/**
 * The freeze as this reader may see it, or undefined: its apps in environments they may read and, in impersonation
 * mode, whose object their Kubernetes RBAC lets them get (issue 40); the write-backs of the others left out. A
 * freeze none of whose apps they may see is not theirs to see.
 */
async function seenBy(req: FastifyRequest, deps: AppDeps, f: FreezeView): Promise<FreezeView | undefined> {
  if (!f.doc.targets.length)
    return allowed(req, 'app.read', { cluster: f.cluster, ...(f.env ? { env: f.env } : {}) }) ? f : undefined;
  const appVisible = appVisibility(deps.reviewer, req);
  const targets: FreezeView['doc']['targets'] = [];
  for (const t of f.doc.targets)
    if (allowed(req, 'app.read', { cluster: f.cluster, env: t.env }) && (await appVisible(t.appId))) targets.push(t);
  if (!targets.length) return undefined;
  if (targets.length === f.doc.targets.length) return f;
  const shown = new Set(targets.map((t) => t.appId));
  const hides = envFilter(req, deps.catalog, f.cluster).hides;
  return {
    ...f,
    doc: {
      ...f.doc,
      targets,
      ...(f.doc.writeBack ? { writeBack: f.doc.writeBack.filter((w) => shown.has(w.appId)) } : {}),
      // a decision names an object (`<ref id>#<path>`): those in an environment the reader may not read are left out
      ...(f.doc.decisions ? { decisions: f.doc.decisions.filter((d) => !hides(decisionRef(d.change))) } : {}),
    },
  };
}

/** The object a decision's change id names: `<cluster>/<group|core>/<kind>/<namespace|_>/<name>#<path>`. */
export function decisionRef(change: string): { group: string; kind: string; namespace?: string; name: string } {
  const parts = (change.split('#')[0] ?? '').split('/');
  const [group = '', kind = '', namespace = '_', name = ''] = parts.slice(-4);
  return { group: group === 'core' ? '' : group, kind, ...(namespace !== '_' ? { namespace } : {}), name };
}

/** `f` as this reader may see it (`seen`); whether they may end it is decided on all of it */
function dto(req: FastifyRequest, f: FreezeView, seen: FreezeView = f): FreezeDto {
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
    targets: seen.doc.targets,
    extensions: f.doc.extensions,
    ...(seen.doc.decisions ? { decisions: seen.doc.decisions } : {}),
    ...(seen.doc.writeBack ? { writeBack: seen.doc.writeBack } : {}),
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
  // planned windows (issue 43): their routes, and the scheduler that starts their occurrences as freezes here
  const windowApps = () => {
    deps.catalog.settleNow();
    return deps.catalog.list();
  };
  const labels = (id: string) =>
    (deps.catalog.rawObject(id) as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels;
  const windowStore = new WindowStore(deps.store);
  registerWindowRoutes(app, deps, { store: windowStore, apps: windowApps, labels });
  registerCalendarRoutes(app, deps, {
    windows: windowStore,
    freezes: store,
    labels,
    seen: async (req, f) => {
      const v = await seenBy(req, deps, { ...f, active: f.status === 'active' || f.status === 'ending' });
      return v ? v.doc.targets.map((t) => t.appId) : [];
    },
  });
  const breakGlassStore = new BreakGlassStore(deps.store);
  const breakGlass = new BreakGlassService({
    store: breakGlassStore,
    windows: windowStore,
    freezes: service,
    recorder: deps.recorder,
    apps: windowApps,
    labels,
  });
  registerBreakGlassRoutes(app, deps, { service: breakGlass, store: breakGlassStore });
  const scheduler = new WindowScheduler({
    store: windowStore,
    breakGlass: breakGlassStore,
    freezes: service,
    apps: windowApps,
    labels,
    recorder: deps.recorder,
    leads: () => deps.leads?.() ?? true,
    replica: deps.bus?.replica ?? 'console',
    log: app.log,
  });
  app.addHook('onReady', async () => scheduler.start());
  app.addHook('onClose', async () => scheduler.stop());
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
    return validated(FreezeResponse, { freeze: await shown(req, f) });
  });

  app.get('/api/freezes', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) => {
    const { active } = parsed(FreezesQuery, req.query);
    const freezes: FreezeDto[] = [];
    for (const f of await service.list(active)) {
      const seen = await seenBy(req, deps, f);
      if (seen) freezes.push(dto(req, f, seen));
    }
    return validated(FreezesResponse, { freezes });
  });

  /** the freeze the route names; one the reader may not see is a 403 recorded as access.denied (issue 40) */
  const visibleFreeze = async (req: FastifyRequest) => {
    const { id } = parsed(FreezeParams, req.params);
    const f = await service.view(id);
    if (!(await seenBy(req, deps, f))) {
      const user = req.principal as Principal;
      const env = f.env ?? f.doc.targets[0]?.env;
      const reason =
        whyNot(user.grants, 'app.read', { cluster: f.cluster, ...(env ? { env } : {}) }) ??
        `Kubernetes RBAC does not let ${user.name} get the object of any app the freeze holds`;
      recordDenial(
        deps.recorder,
        req,
        'app.read',
        { cluster: f.cluster, env, ...(f.app ? { app: f.app } : {}) },
        reason,
      );
      throw new HttpError(
        403,
        'Forbidden',
        "You need a role on this freeze's environment, and access to its apps, to see it",
      );
    }
    return f;
  };
  const shown = async (req: FastifyRequest, f: FreezeView) => dto(req, f, (await seenBy(req, deps, f)) ?? f);

  app.get('/api/freezes/:id', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, async (req) =>
    validated(FreezeResponse, { freeze: await shown(req, await visibleFreeze(req)) }),
  );

  app.get(
    '/api/freezes/:id/changes',
    { config: { access: { action: 'app.read', scope: 'anywhere' } } },
    async (req) => {
      const f = await visibleFreeze(req);
      // only the changes of the apps this reader sees in the freeze
      const apps = new Set(((await seenBy(req, deps, f)) ?? f).doc.targets.map((t) => t.appId));
      const all = await service.changes(f.id);
      const { changes, unknown } = await changesSeenBy(
        {
          changes: all.changes.filter((c) => apps.has(c.appId)),
          unknown: all.unknown.filter((u) => apps.has(u.appId)),
        },
        readerAccess(req),
      );
      return validated(FreezeChangesResponse, { changes, unknown });
    },
  );

  app.post(
    '/api/freezes/:id/extend',
    { config: { access: { action: 'freeze.toggle', scope: 'anywhere' } } },
    async (req) => {
      const f = await visibleFreeze(req);
      const body = parsed(FreezeExtendBody, req.body ?? {});
      return validated(FreezeResponse, {
        freeze: await shown(req, await service.extend(f.id, actorOf(req, deps), body)),
      });
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
        freeze: await shown(req, await service.end(f.id, actorOf(req, deps), body.decisions)),
      });
    },
  );
};
