// Git versus live: the app's diff and its renders across environments. Thin: the service does the work; the diff
// is shown as the reader may see it (diff-seen-by.ts).
import type { FastifyPluginAsync } from 'fastify';
import { DiffResponse, EnvCompareResponse } from '../../api/schemas.ts';
import { allowed, envFilter } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { appOf } from '../apps/index.ts';
import { validated } from '../http/respond.ts';
import { diffSeenBy } from './diff-seen-by.ts';
import { DiffService } from './service.ts';
import { familyOf } from './env-compare.ts';

export const diffRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const diffs = new DiffService(deps);

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/environments',
    { config: { access: { action: 'app.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      // only the environments this user may read
      const mine = deps.catalog.list().filter((m) => allowed(req, 'app.read', { cluster: m.cluster, env: m.env }));
      const family = familyOf(a, deps.reviewer ? await deps.reviewer.visibleApps(req, mine) : mine, deps.envOrder);
      // the others are counted, never named: the panel says environments were left out instead of vanishing
      const hidden = familyOf(a, deps.catalog.list(), deps.envOrder).length - family.length;
      const body = await diffs.environments(family, req.principal);
      return validated(EnvCompareResponse, hidden > 0 ? { ...body, hiddenEnvironments: hidden } : body);
    },
  );

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/diff',
    { config: { access: { action: 'app.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      // rows in an environment this user may not read (by their namespace's mapping) are left out and counted
      const hides = envFilter(req, deps.catalog, a.cluster).hides;
      return validated(DiffResponse, diffSeenBy(await diffs.diff(a, req.principal), hides, a.automation.prune));
    },
  );
};
