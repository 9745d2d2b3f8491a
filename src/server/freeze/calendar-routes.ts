// GET /api/envs/:env/calendar (issue 43): the environment's calendar (calendar.ts) as the reader may see it — the
// apps of the environment they may read (and, in impersonation mode, get), the freezes they may see, and the
// releases when they may read its evidence. Planned windows that cannot be read are a 503: a calendar without them
// would say "nothing planned".
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { EnvCalendarQuery, EnvCalendarResponse, EnvReleasesParams, EVIDENCE_UNAVAILABLE } from '../../api/schemas.ts';
import { rolesFor } from '../../domain/access.ts';
import { envReleaseMetrics, METRIC_RELEASE_TYPES, ROLLBACK_TYPES } from '../../domain/release-metrics.ts';
import { syncWindowsReader } from '../apps/index.ts';
import { allowed, appVisibility, recordDenial, withVisibleApps } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { readCapped } from '../evidence/index.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { CALENDAR_MAX_FREEZES, envCalendar } from './calendar.ts';
import type { FreezeRow, FreezeStore } from './store.ts';
import type { WindowStore } from './window-store.ts';

const DAY = 86_400_000;
/** release records read per calendar; more: `truncated` */
const MAX_RELEASE_RECORDS = 20_000;

export interface CalendarRouteDeps {
  windows: WindowStore;
  freezes: FreezeStore;
  labels: (appId: string) => Record<string, string> | undefined;
  /** the freeze's apps this reader may see (none: not theirs to see) */
  seen: (req: FastifyRequest, f: FreezeRow) => Promise<string[]>;
  now?: () => number;
}

export function registerCalendarRoutes(app: FastifyInstance, deps: AppDeps, c: CalendarRouteDeps): void {
  const reader = syncWindowsReader(deps);
  app.get(
    '/api/envs/:env/calendar',
    // app.read somewhere is checked by the guard; the environment below, per request
    { config: { access: { action: 'app.read', scope: 'anywhere' } } },
    async (req) => {
      const { env } = parsed(EnvReleasesParams, req.params);
      const q = parsed(EnvCalendarQuery, req.query);
      if (!allowed(req, 'app.read', { env })) {
        const why = `You need the ${rolesFor('app.read')} role in ${env} to see its calendar`;
        recordDenial(deps.recorder, req, 'app.read', { env }, why);
        throw new HttpError(403, 'Forbidden', why);
      }
      const now = c.now?.() ?? Date.now();
      const from = q.from ? Date.parse(q.from) : now;
      const to = from + q.days * DAY;
      deps.catalog.settleNow();
      const granted = deps.catalog
        .list()
        .filter((a) => a.env === env && allowed(req, 'app.read', { cluster: a.cluster, env }));
      const apps = await withVisibleApps(appVisibility(deps.reviewer, req), granted, (a) => a.id);
      const readsEvidence = allowed(req, 'evidence.read', { env });
      const windows = async () => {
        try {
          return await c.windows.list();
        } catch (e) {
          throw new HttpError(
            503,
            EVIDENCE_UNAVAILABLE,
            `the store cannot be read: the planned windows of ${env} are unknown until it answers`,
            undefined,
            e instanceof Error ? e.message : String(e),
          );
        }
      };
      const cal = await envCalendar(env, { from, to, now }, apps, {
        windows,
        freezes: (a, b) => c.freezes.overlapping(a, b, CALENDAR_MAX_FREEZES),
        labels: c.labels,
        syncWindows: (a) => {
          const v = reader.forApp(a);
          return v && { project: v.project, windows: v.windows, ...(v.status === 'unknown' ? { why: v.why } : {}) };
        },
        seen: (f) => c.seen(req, f),
        releases: async (a, b) => {
          if (!readsEvidence)
            throw new Error(`you need the ${rolesFor('evidence.read')} role in ${env} to see its releases`);
          const read = await readCapped(
            async (sq) => {
              try {
                return await deps.store.list(sq);
              } catch (e) {
                throw new Error(`the evidence store cannot be read: ${e instanceof Error ? e.message : String(e)}`);
              }
            },
            { env, type: [...METRIC_RELEASE_TYPES, ...ROLLBACK_TYPES], from: a, to: b },
            MAX_RELEASE_RECORDS,
            (e) => allowed(req, 'evidence.read', { cluster: e.cluster ?? '\u0000', env }),
          );
          const m = envReleaseMetrics(env, read.events, { from: a, to: b, failureWindowHours: 24 });
          return {
            releases: m.releases.map((r) => ({ app: r.app, sha: r.sha, at: r.deployedAt, failed: r.failed })),
            truncated: read.truncated,
          };
        },
      });
      return validated(EnvCalendarResponse, cal);
    },
  );
}
