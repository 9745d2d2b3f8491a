import type { FastifyPluginAsync } from 'fastify';
import { EvidenceQuerySchema, EvidenceResponse, VerifyResponse } from '../../api/schemas.ts';
import { parsed, validated } from '../http/respond.ts';
import type { AppDeps } from '../deps.ts';
import { allowed } from '../auth/guard.ts';

export const evidenceRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get('/api/evidence', { config: { access: { action: 'evidence.read', scope: 'anywhere' } } }, async (req) => {
    const q = parsed(EvidenceQuerySchema, req.query);
    const events = await deps.store.list({
      ...(q.app ? { app: q.app } : {}),
      ...(q.cluster ? { cluster: q.cluster } : {}),
      ...(q.type ? { type: q.type } : {}),
      ...(q.before ? { beforeSeq: q.before } : {}),
      limit: q.limit ?? 200,
    });
    // each event is visible where its own cluster and environment are; events without one (console start,
    // cluster connected, sign-ins) only to grants on every cluster / every environment
    const NOWHERE = '\u0000'; // matched only by '*' grants
    const visible = events.filter((e) =>
      allowed(req, 'evidence.read', { cluster: e.cluster ?? NOWHERE, env: e.env ?? NOWHERE }),
    );
    return validated(EvidenceResponse, { events: visible });
  });

  app.get('/api/evidence/verify', { config: { access: { action: 'evidence.verify', scope: 'anywhere' } } }, async () =>
    validated(VerifyResponse, await deps.store.verify()),
  );
};
