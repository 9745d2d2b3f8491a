// Server-sent events: app upserts/deletes and cluster state, so the SPA
// updates without polling. A heartbeat comment keeps proxies from closing it.
import type { FastifyPluginAsync } from 'fastify';
import type { StreamMessage } from '../../api/schemas.ts';
import type { AppDeps } from '../deps.ts';
import { allowed } from '../auth/index.ts';
import type { Session } from '../auth/index.ts';
import type { CatalogEvents } from './catalog.ts';
import { summarize } from './routes.ts';
import { syncWindowsReader } from './sync-windows.ts';

export const streamRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const open = new Set<() => void>();
  app.addHook('onClose', async () => {
    for (const end of open) end();
  });
  const bySession = new Map<string, Set<() => void>>();
  deps.sessions.on('revoked', (key) => {
    for (const end of bySession.get(key) ?? []) end();
  });
  app.get('/api/stream', { config: { access: { action: 'app.read', scope: 'anywhere' } } }, (req, rep) => {
    const session = req.session as Session;
    rep.hijack();
    const res = rep.raw;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    let id = 0;
    const send = (m: StreamMessage) => {
      // async checks (impersonation) may answer after the stream closed
      if (res.writableEnded || res.destroyed) return;
      res.write(`id: ${++id}\nevent: message\ndata: ${JSON.stringify(m)}\n\n`);
    };
    res.write('retry: 2000\n\n');
    // only what this user may see: apps in its grants (and, when impersonating, its Kubernetes RBAC)
    const seen = new Set<string>();
    const seesCluster = (name: string) => allowed(req, 'app.read', { cluster: name });
    for (const c of deps.clusters.states()) if (seesCluster(c.name)) send({ type: 'cluster', cluster: c });
    const onApp = (e: CatalogEvents['app'][0]) => {
      if (e.type === 'delete') {
        if (seen.delete(e.id)) send({ type: 'app-delete', id: e.id });
        return;
      }
      const a = e.app;
      if (!allowed(req, 'app.read', { cluster: a.cluster, env: a.env })) return;
      const deliver = () => {
        seen.add(a.id);
        send({ type: 'app-upsert', app: summarize(a, syncWindowsReader(deps)) });
      };
      if (!deps.reviewer) return deliver();
      void deps.reviewer.visibleApps(req, [a]).then(
        (v) => (v.length ? deliver() : undefined),
        () => undefined,
      );
    };
    const onCluster = (c: CatalogEvents['cluster'][0]) => {
      if (seesCluster(c.name)) send({ type: 'cluster', cluster: c });
    };
    const onObjects = (id: string) => {
      const a = deps.catalog.get(id);
      if (!a || !allowed(req, 'app.read', { cluster: a.cluster, env: a.env })) return;
      if (!deps.reviewer) return send({ type: 'app-objects', id });
      void deps.reviewer.visibleApps(req, [a]).then(
        (v) => (v.length ? send({ type: 'app-objects', id }) : undefined),
        () => undefined,
      );
    };
    // prune previews and freezes changed by any replica: ids only (the refetch goes through the guard); an
    // app-scoped change only to those who may see that app
    const offBus = deps.bus?.on((e) => {
      const c = e.change;
      if (c.kind === 'resync') return send({ type: 'resync' });
      if (c.kind !== 'prune' && c.kind !== 'freeze') return;
      // without an app: a random record id only (the refetch is authorized); with one: only to those who
      // may see that app here (unknown to this replica: not sent)
      if (!c.app) return send({ type: 'state', kind: c.kind, id: c.id });
      const a = deps.catalog.get(c.app);
      if (!a || !allowed(req, 'app.read', { cluster: a.cluster, env: a.env })) return;
      const deliver = () => send({ type: 'state', kind: c.kind, id: c.id, app: a.id });
      if (!deps.reviewer) return deliver();
      void deps.reviewer.visibleApps(req, [a]).then(
        (v) => (v.length ? deliver() : undefined),
        () => undefined,
      );
    });
    deps.catalog.on('objects', onObjects);
    deps.catalog.on('app', onApp);
    // in the tick it subscribed: every app change after this version reaches this stream
    send({ type: 'hello', version: deps.catalog.version() });
    deps.catalog.on('cluster', onCluster);
    const beat = setInterval(() => {
      // an idle or expired session ends its stream too
      if (!deps.sessions.alive(session.key)) return end();
      res.write(': keep-alive\n\n');
    }, 15_000);
    const close = () => {
      clearInterval(beat);
      offBus?.();
      deps.catalog.off('app', onApp);
      deps.catalog.off('cluster', onCluster);
      deps.catalog.off('objects', onObjects);
    };
    const mine = bySession.get(session.key) ?? new Set<() => void>();
    bySession.set(session.key, mine);
    const forget = () => {
      close();
      open.delete(end);
      mine.delete(end);
      if (!mine.size) bySession.delete(session.key);
    };
    function end() {
      forget();
      res.end();
    }
    open.add(end);
    mine.add(end);
    req.raw.on('close', forget);
  });
};
