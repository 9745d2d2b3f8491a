import type { FastifyPluginAsync } from 'fastify';
import { EvidenceQuerySchema, EvidenceResponse, VerifyResponse } from '../../api/schemas.ts';
import { HttpError, reply, type AppDeps } from '../app.ts';
import { allowed } from '../auth/guard.ts';

export const evidenceRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get('/api/evidence', { config: { access: { action: 'evidence.read', scope: 'anywhere' } } }, async (req) => {
    const q = EvidenceQuerySchema.safeParse(req.query);
    if (!q.success)
      throw new HttpError(400, 'BadRequest', q.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const events = await deps.store.list({
      ...(q.data.app ? { app: q.data.app } : {}),
      ...(q.data.cluster ? { cluster: q.data.cluster } : {}),
      ...(q.data.type ? { type: q.data.type } : {}),
      ...(q.data.before ? { beforeSeq: q.data.before } : {}),
      limit: q.data.limit ?? 200,
    });
    // each event is visible where its own cluster and environment are; events without one (console start,
    // cluster connected, sign-ins) only to grants on every cluster / every environment
    const NOWHERE = '\u0000'; // matched only by '*' grants
    const visible = events.filter((e) =>
      allowed(req, 'evidence.read', { cluster: e.cluster ?? NOWHERE, env: e.env ?? NOWHERE }),
    );
    return reply(EvidenceResponse, { events: visible });
  });

  app.get('/api/evidence/verify', { config: { access: { action: 'evidence.verify', scope: 'anywhere' } } }, async () =>
    reply(VerifyResponse, await deps.store.verify()),
  );
};
