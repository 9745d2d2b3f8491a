// The releases of one app (issue 16): its release evidence grouped per revision, newest first, each with its
// nine states, and the newest one's "merged, but not live — why?". Readable by whoever may read the app's
// evidence (evidence.read on its cluster and environment).
import type { FastifyPluginAsync } from 'fastify';
import { ReleasesResponse } from '../../api/schemas.ts';
import {
  buildReleases,
  RELEASE_EVIDENCE_TYPES,
  RELEASE_GAP,
  whyNotLive,
  withPromotionTarget,
} from '../../domain/release.ts';
import type { AppDeps } from '../deps.ts';
import { appOf } from '../http/app-of.ts';
import { validated } from '../http/respond.ts';

/** release records read per request: the latest releases of the app (about 6 records each) */
const MAX_RECORDS = 1000;

export const releaseRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/releases',
    { config: { access: { action: 'evidence.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const events = await deps.store.list({ app: a.id, type: RELEASE_EVIDENCE_TYPES, limit: MAX_RECORDS });
      const releases = withPromotionTarget(buildReleases(events), a.env, deps.envOrder);
      const gaps = (await deps.store.list({ app: a.id, type: [RELEASE_GAP], limit: 20 })).map((e) => ({
        seq: e.seq,
        from: String(e.data.from ?? ''),
        to: String(e.data.to ?? e.time),
        lastRecordedSha: String(e.data.lastRecordedSha ?? ''),
        currentSha: String(e.data.currentSha ?? ''),
      }));
      const notLive = whyNotLive(releases[0], {
        ...a,
        clusterReachable: deps.clusters.clusters.get(a.cluster)?.state.status !== 'unreachable',
      });
      return validated(ReleasesResponse, { releases, gaps, ...(notLive ? { notLive } : {}) });
    },
  );
};
