// The releases of one app (issue 16): its release evidence grouped per revision, newest first, each with its
// nine states, and the newest one's "merged, but not live — why?". Readable by whoever may read the app's
// evidence (evidence.read on its cluster and environment). A rollback to an earlier release opens a pull request
// through the repo host's forge (release.rollback: developer, oncall, admin on the app's cluster and env).
import type { FastifyPluginAsync } from 'fastify';
import { ReleasesResponse, RollbackBody, RollbackResponse } from '../../api/schemas.ts';
import { heldByFreeze, whyNotLive, withPromotionTarget } from '../../domain/release-not-live.ts';
import { buildReleases, RELEASE_CANARY, RELEASE_EVIDENCE_TYPES, RELEASE_GAP } from '../../domain/release.ts';
import type { AppDeps } from '../deps.ts';
import { appOf } from '../apps/index.ts';
import { parsed, validated } from '../http/respond.ts';
import type { Principal } from '../auth/index.ts';
import { RollbackService } from './rollback.ts';

/** release records read per request: the latest releases of the app (about 6 records each) */
const MAX_RECORDS = 1000;
/** verifications read per request (the newest; older releases keep their state records) */
const MAX_VERIFICATIONS = 300;

export const releaseRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/releases',
    { config: { access: { action: 'release.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      // the states and, apart, the newest verifications (periodic ones, one per interval, would otherwise push
      // older releases out of the window)
      const [states, verifications, canary] = await Promise.all([
        deps.store.list({
          app: a.id,
          type: RELEASE_EVIDENCE_TYPES.filter((t) => t !== 'release.verification'),
          limit: MAX_RECORDS,
        }),
        deps.store.list({ app: a.id, type: ['release.verification'], limit: MAX_VERIFICATIONS }),
        // the canary's steps (apart too: a long canary records many)
        deps.store.list({ app: a.id, type: [RELEASE_CANARY], limit: MAX_RECORDS }),
      ]);
      const events = [...states, ...verifications, ...canary];
      // a frozen app's newest revision is held by its freeze (or window), not pending (issue 43)
      const releases = heldByFreeze(withPromotionTarget(buildReleases(events), a.env, deps.envOrder), a.freeze);
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

  const rollback = new RollbackService({
    recorder: deps.recorder,
    store: deps.store,
    forges: deps.forges,
    dataDir: deps.dataDir ?? '.data',
  });
  app.post(
    '/api/apps/:cluster/:namespace/:kind/:name/releases/:sha/rollback',
    { config: { access: { action: 'release.rollback', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const body = parsed(RollbackBody, req.body ?? {});
      const { sha } = req.params as { sha: string };
      return validated(RollbackResponse, await rollback.open(a, sha, body.reason, req.principal as Principal));
    },
  );
};
