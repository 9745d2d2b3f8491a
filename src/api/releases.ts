// Releases of an app (their state chain, rollback pull requests) and the release metrics of an environment.
import { z } from 'zod';
import { APP_KINDS, CONTROLLERS, HEALTH_STATES, SYNC_STATES } from '../domain/app.ts';
import { RELEASE_STATES } from '../domain/release.ts';

// ---- releases (issue 16): one row per release of an app, its nine states as a chain ----
export const ReleaseStateSchema = z.object({
  name: z.enum(RELEASE_STATES),
  step: z.number(),
  status: z.enum(['ok', 'failed', 'unknown', 'pending', 'held']),
  value: z.string().optional(),
  why: z.string().optional(),
  time: z.string().optional(),
  actor: z.string().optional(),
  seq: z.number().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export const ReleaseSchema = z.object({
  sha: z.string(),
  revision: z.string(),
  firstSeen: z.string(),
  states: z.array(ReleaseStateSchema),
  blocked: z.object({ state: z.enum(RELEASE_STATES), why: z.string() }).optional(),
  /** its render is this running release's (sha): no change here, not a release of this app */
  unchangedFrom: z.string().optional(),
  /** its canary, step by step (an Argo Rollout or a Flagger Canary) */
  canary: z
    .array(
      z.object({
        seq: z.number(),
        time: z.string(),
        rollout: z.string(),
        state: z.string(),
        step: z.number().nullable(),
        steps: z.number(),
        weight: z.number(),
        phase: z.string(),
        reason: z.string(),
      }),
    )
    .optional(),
});
/** newest first; `notLive`: the newest release's first incomplete state and why, with the app's conditions */
export const ReleasesResponse = z.object({
  releases: z.array(ReleaseSchema),
  /** windows in which the recorder was not recording while the app's revision moved (newest first) */
  gaps: z
    .array(
      z.object({
        seq: z.number(),
        from: z.string(),
        to: z.string(),
        lastRecordedSha: z.string(),
        currentSha: z.string(),
      }),
    )
    .optional(),
  notLive: z.object({ state: z.enum(RELEASE_STATES), why: z.string() }).optional(),
});
export type ReleasesResponse = z.infer<typeof ReleasesResponse>;
/** a rollback pull request to an earlier release: why (the reviewer reads it in the pull request) */
export const RollbackBody = z.object({ reason: z.string().trim().min(1, 'say why').max(500) });
export const RollbackResponse = z.object({
  pullRequest: z.object({ number: z.number(), url: z.string(), branch: z.string(), headCommit: z.string() }),
  plan: z.object({
    branch: z.string(),
    fromSha: z.string(),
    targetSha: z.string(),
    path: z.string(),
    files: z.array(z.object({ path: z.string(), change: z.enum(['restore', 'delete']) })),
    outside: z.array(z.string()),
  }),
  intentSeq: z.number(),
  /** the rollback pull request to this release was already open: it is the one named, nothing new was opened */
  existing: z.literal(true).optional(),
});
export type RollbackResponse = z.infer<typeof RollbackResponse>;
export type ReleaseDto = z.infer<typeof ReleaseSchema>;
export type ReleaseStateDto = z.infer<typeof ReleaseStateSchema>;

// ---- environment releases (issue 16): release metrics of one environment from its evidence, and its apps ----
/** `days`: the last 1–90 UTC days, today included; `cluster`: one cluster of the environment (default: all) */
export const EnvReleasesQuery = z.object({
  cluster: z.string().min(1).max(253).optional(),
  days: z.coerce
    .number({ error: 'days must be a whole number from 1 to 90' })
    .int('days must be a whole number from 1 to 90')
    .min(1, 'days must be a whole number from 1 to 90')
    .max(90, 'days must be a whole number from 1 to 90')
    .default(30),
});
export const EnvReleasesParams = z.object({
  env: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'not an environment name'),
});
const nullableSeconds = z.number().nullable();
export const EnvReleaseDaySchema = z.object({
  day: z.string(),
  /** evidence records of the environment that day: 0 means nothing is known of it (not "no deployment") */
  records: z.number(),
  deployments: z.number(),
  failures: z.number(),
  drifts: z.number(),
  freezes: z.number(),
});
export const EnvDeployedReleaseSchema = z.object({
  app: z.string(),
  cluster: z.string().nullable(),
  sha: z.string(),
  deployedAt: z.string(),
  day: z.string(),
  leadTimeSeconds: nullableSeconds,
  /** of commit → Healthy, the time a planned freeze window held the app (left out of the lead time) */
  heldByWindowSeconds: z.number(),
  failed: z.boolean(),
  failures: z.array(z.string()),
  windowOpen: z.boolean(),
});
export const EnvReleasesResponse = z.object({
  env: z.string(),
  cluster: z.string().optional(),
  from: z.string(),
  to: z.string(),
  failureWindowHours: z.number(),
  /** the store held more records than one request reads: the oldest part of the range is missing */
  truncated: z.boolean(),
  /** when truncated, the time of the oldest record read: the metrics are complete from there on */
  completeFrom: z.string().optional(),
  metrics: z.object({
    /** records of the environment in the range: 0 means nothing is known and every rate is null */
    records: z.number(),
    days: z.array(EnvReleaseDaySchema),
    /** seconds from the commit to Healthy, nearest-rank; null when n = 0 */
    leadTime: z.object({
      median: nullableSeconds,
      p90: nullableSeconds,
      n: z.number(),
      heldByWindowSeconds: z.number(),
    }),
    /** rate null when total = 0 (unknown, not 0 %); `open`: deployments whose failure window is still open */
    changeFailureRate: z.object({
      failed: z.number(),
      total: z.number(),
      rate: z.number().nullable(),
      open: z.number(),
    }),
    /** commits applied in the range that left an app's render as its running release's: not deployments */
    unchanged: z.number(),
    eventCounts: z.record(z.string(), z.number()),
  }),
  /** deployed releases of the range, newest first (at most 200) */
  releases: z.array(EnvDeployedReleaseSchema),
  /** the environment's apps the reader may read evidence of, each with its newest release (null: none recorded) */
  apps: z.array(
    z.object({
      id: z.string(),
      cluster: z.string(),
      namespace: z.string(),
      kind: z.enum(APP_KINDS),
      name: z.string(),
      controller: z.enum(CONTROLLERS),
      sync: z.enum(SYNC_STATES),
      health: z.enum(HEALTH_STATES),
      newest: ReleaseSchema.nullable(),
      /** the app's release records could not be read completely (capped): its newest release may be older */
      truncated: z.boolean(),
    }),
  ),
});
export type EnvReleasesResponse = z.infer<typeof EnvReleasesResponse>;
export type EnvReleaseDayDto = z.infer<typeof EnvReleaseDaySchema>;
