// Server-sent events: app upserts/deletes and cluster state, so the SPA
// updates without polling. A heartbeat comment keeps proxies from closing it.
import type { FastifyPluginAsync } from 'fastify';
import type { StreamMessage } from '../../api/schemas.ts';
import type { AppDeps } from '../app.ts';
import type { CatalogEvents } from '../services/app-catalog.ts';
import { summarize } from './apps.ts';

export const streamRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const open = new Set<() => void>();
  app.addHook('onClose', async () => {
    for (const end of open) end();
  });
  app.get('/api/stream', (req, rep) => {
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
      res.write(`id: ${++id}\nevent: message\ndata: ${JSON.stringify(m)}\n\n`);
    };
    res.write('retry: 2000\n\n');
    for (const c of deps.clusters.states()) send({ type: 'cluster', cluster: c });
    const onApp = (e: CatalogEvents['app'][0]) =>
      send(e.type === 'upsert' ? { type: 'app-upsert', app: summarize(e.app) } : { type: 'app-delete', id: e.id });
    const onCluster = (c: CatalogEvents['cluster'][0]) => send({ type: 'cluster', cluster: c });
    const onObjects = (id: string) => send({ type: 'app-objects', id });
    deps.catalog.on('objects', onObjects);
    deps.catalog.on('app', onApp);
    deps.catalog.on('cluster', onCluster);
    const beat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    const close = () => {
      clearInterval(beat);
      deps.catalog.off('app', onApp);
      deps.catalog.off('cluster', onCluster);
      deps.catalog.off('objects', onObjects);
    };
    const end = () => {
      close();
      open.delete(end);
      res.end();
    };
    open.add(end);
    req.raw.on('close', () => {
      close();
      open.delete(end);
    });
  });
};
