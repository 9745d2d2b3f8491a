// GET /api/openapi.json: the API's OpenAPI 3.1 document (document.ts), built once on first request.
// Public, like /healthz: it holds no data of the console (no apps, clusters, users), only the routes and the shapes
// of their bodies, which the SPA's bundle ships anyway; a client can read it before signing in.
import type { FastifyPluginAsync } from 'fastify';
import { buildOpenApi } from './document.ts';

export const openApiRoutes: FastifyPluginAsync = async (app) => {
  let doc: string | undefined;
  app.get('/api/openapi.json', { config: { access: { public: true } } }, async (_req, rep) => {
    doc ??= JSON.stringify(buildOpenApi());
    return rep.type('application/json; charset=utf-8').header('Cache-Control', 'no-cache').send(doc);
  });
};
