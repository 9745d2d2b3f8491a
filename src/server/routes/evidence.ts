import type { FastifyPluginAsync } from 'fastify';
import { EvidenceQuerySchema, EvidenceResponse, VerifyResponse } from '../../api/schemas.ts';
import { HttpError, reply, type AppDeps } from '../app.ts';

export const evidenceRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get('/api/evidence', async (req) => {
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
    return reply(EvidenceResponse, { events });
  });

  app.get('/api/evidence/verify', async () => reply(VerifyResponse, await deps.store.verify()));
};
