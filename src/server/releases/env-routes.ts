// The releases of one environment (issue 16): deployments per day, lead time commit → Healthy, change failure
// rate, drift and freeze events over time (domain/release-metrics.ts), and the environment's apps with their
// newest release. Scoped like the evidence routes: the reader needs evidence.read on the environment (on some
// cluster), and sees only the records and apps of the clusters where they have it; in impersonation mode only the
// apps (and their records) whose object its Kubernetes RBAC lets it get (issue 40). Records are read page by
// page up to a cap (`truncated` says so); a store that cannot be read is a 503, never an empty chart.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { EVIDENCE_UNAVAILABLE, EnvReleasesParams, EnvReleasesQuery, EnvReleasesResponse } from '../../api/schemas.ts';
import { rolesFor } from '../../domain/access.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import { envReleaseMetrics, METRIC_EVENT_TYPES, type MetricsEvent } from '../../domain/release-metrics.ts';
import { buildReleases, RELEASE_EVIDENCE_TYPES } from '../../domain/release.ts';
import { allowed, appVisibility, recordDenial, withVisibleApps } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { readCapped, type EvidenceQuery } from '../evidence/index.ts';

/** release, drift and freeze records read per request; more than that: `truncated` (the oldest are left out) */
const MAX_RECORDS = 20_000;
/** failed verification records read per request (periodic checks are many; only failed ones matter here) */
const MAX_FAILED_VERIFICATIONS = 5000;
/** per app: its newest release's records (a release has about six; verifications are read apart) */
const APP_RECORDS = 300;
const APP_VERIFICATIONS = 50;
/** deployed releases listed in the answer, newest first */
const MAX_RELEASES = 200;
const FAILURE_WINDOW_HOURS = 24;
const DAY_MS = 86_400_000;

// each record is visible where its own cluster and environment are (as in evidence/routes.ts)
const NOWHERE = '\u0000';
const visibleTo =
  (req: FastifyRequest) =>
  (e: { cluster?: string | null; env?: string | null }): boolean =>
    allowed(req, 'evidence.read', { cluster: e.cluster ?? NOWHERE, env: e.env ?? NOWHERE });

export const envReleaseRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get(
    '/api/envs/:env/releases',
    // evidence.read somewhere is checked by the guard; the environment (and cluster) below, per request
    { config: { access: { action: 'evidence.read', scope: 'anywhere' } } },
    async (req) => {
      const { env } = parsed(EnvReleasesParams, req.params);
      const q = parsed(EnvReleasesQuery, req.query);
      const scope = { env, ...(q.cluster ? { cluster: q.cluster } : {}) };
      if (!allowed(req, 'evidence.read', scope)) {
        const why = `You need the ${rolesFor('evidence.read')} role in ${env}${q.cluster ? ` on ${q.cluster}` : ''} to see its release evidence`;
        recordDenial(deps.recorder, req, 'evidence.read', scope, why);
        throw new HttpError(403, 'Forbidden', why);
      }
      const visible = visibleTo(req);

      const list = async (sq: EvidenceQuery): Promise<EvidenceEvent[]> => {
        try {
          return await deps.store.list(sq);
        } catch (e) {
          throw new HttpError(
            503,
            EVIDENCE_UNAVAILABLE,
            `the evidence store cannot be read: the release metrics of ${env} are unknown until it answers`,
            undefined,
            e instanceof Error ? e.message : String(e),
          );
        }
      };

      const readAll = (filter: EvidenceQuery, max: number) => readCapped(list, filter, max, visible);

      const now = Date.now();
      const to = new Date(now).toISOString();
      const from = new Date(Math.floor(now / DAY_MS) * DAY_MS - (q.days - 1) * DAY_MS).toISOString();
      const base: EvidenceQuery = { env, ...(q.cluster ? { cluster: q.cluster } : {}), from, to };
      const main = await readAll(
        { ...base, type: METRIC_EVENT_TYPES.filter((t) => t !== 'release.verification') },
        MAX_RECORDS,
      );
      // verifications: only the failed ones count, and periodic checks are many. The store's text filter keeps
      // the records whose JSON says "status":"failed" somewhere (a superset); the metrics check data.status.
      const failedChecks = await readAll(
        { ...base, type: 'release.verification', text: '"status":"failed"' },
        MAX_FAILED_VERIFICATIONS,
      );
      // impersonation mode: only the records of apps whose object the reader's Kubernetes RBAC lets it get, and
      // only those apps (issue 40); records of no app (the environment's) stay
      const appVisible = appVisibility(deps.reviewer, req);
      const events: MetricsEvent[] = deps.reviewer
        ? await withVisibleApps(
            async (id) => !id || (await appVisible(id)),
            [...main.events, ...failedChecks.events],
            (e) => e.app ?? '',
          )
        : [...main.events, ...failedChecks.events];
      const metrics = envReleaseMetrics(env, events, { from, to, failureWindowHours: FAILURE_WINDOW_HOURS });
      const truncated = main.truncated || failedChecks.truncated;
      const completeFrom = [main.completeFrom, failedChecks.completeFrom]
        .filter((t): t is string => !!t)
        .sort()
        .at(-1);

      const granted = deps.catalog
        .list()
        .filter(
          (a) =>
            a.env === env &&
            (!q.cluster || a.cluster === q.cluster) &&
            allowed(req, 'evidence.read', { cluster: a.cluster, env }),
        )
        .sort((a, b) => a.name.localeCompare(b.name) || a.cluster.localeCompare(b.cluster));
      const apps = await withVisibleApps(appVisible, granted, (a) => a.id);
      const states = RELEASE_EVIDENCE_TYPES.filter((t) => t !== 'release.verification');
      const rows = await Promise.all(
        apps.map(async (a) => {
          const [recs, checks] = await Promise.all([
            list({ app: a.id, type: states, limit: APP_RECORDS }),
            list({ app: a.id, type: 'release.verification', limit: APP_VERIFICATIONS }),
          ]);
          const newest = buildReleases([...recs, ...checks])[0] ?? null;
          return {
            id: a.id,
            cluster: a.cluster,
            namespace: a.namespace,
            kind: a.kind,
            name: a.name,
            controller: a.controller,
            sync: a.sync,
            health: a.health,
            newest,
            truncated: recs.length >= APP_RECORDS,
          };
        }),
      );

      const { releases, ...rest } = metrics;
      return validated(EnvReleasesResponse, {
        env,
        ...(q.cluster ? { cluster: q.cluster } : {}),
        from,
        to,
        failureWindowHours: FAILURE_WINDOW_HOURS,
        truncated,
        ...(truncated && completeFrom ? { completeFrom } : {}),
        metrics: {
          records: rest.records,
          days: rest.days,
          leadTime: rest.leadTime,
          changeFailureRate: rest.changeFailureRate,
          unchanged: rest.unchanged,
          eventCounts: rest.eventCounts,
        },
        releases: releases.slice(0, MAX_RELEASES),
        apps: rows,
      });
    },
  );
};
