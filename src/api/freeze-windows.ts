// Planned freeze windows (issue 43): make, list and delete them; the scheduler starts each occurrence as freezes.
import { z } from 'zod';

const names = z.array(z.string().min(1).max(253)).max(100);

export const FreezeWindowScopeSchema = z.object({
  clusters: names.optional(),
  envs: names.optional(),
  /** app ids (`cluster/namespace/kind/name`) */
  apps: names.optional(),
  labels: z.record(z.string().max(317), z.string().max(63)).optional(),
});

// the domain names each wrong field (domain/freeze-windows.ts windowErrors): the schema only keeps shapes
export const FreezeWindowCreateBody = z.object({
  name: z.string().max(63).default(''),
  reason: z.string().max(2000).default(''),
  scope: FreezeWindowScopeSchema.default({}),
  start: z.string().max(64).optional(),
  end: z.string().max(64).optional(),
  cron: z.string().max(200).optional(),
  timeZone: z.string().max(64).optional(),
  minutes: z.number().optional(),
});
export const FreezeWindowParams = z.object({
  name: z.string().regex(/^[a-z0-9][-a-z0-9]{0,62}$/, 'not a window name'),
});
export const FreezeWindowDeleteBody = z.object({ reason: z.string().max(2000).default('') });

const StretchSchema = z.object({ from: z.string(), until: z.string() });

export const FreezeWindowSchema = z.object({
  name: z.string(),
  reason: z.string(),
  scope: FreezeWindowScopeSchema,
  start: z.string().optional(),
  end: z.string().optional(),
  cron: z.string().optional(),
  timeZone: z.string().optional(),
  minutes: z.number().optional(),
  createdBy: z.string(),
  createdAt: z.string(),
  /** in force now (until: the end of this window's occurrence; `atLeast`: it runs on past what was computed) */
  active: StretchSchema.extend({ atLeast: z.boolean() }).nullable(),
  /** the next occurrence after now (within 31 days), or null */
  next: StretchSchema.nullable(),
  /** the apps it covers now that the reader may see */
  apps: z.array(z.string()),
});
export type FreezeWindowDto = z.infer<typeof FreezeWindowSchema>;
export const FreezeWindowsResponse = z.object({ windows: z.array(FreezeWindowSchema) });
export const FreezeWindowResponse = z.object({ window: FreezeWindowSchema });
export type FreezeWindowsResponse = z.infer<typeof FreezeWindowsResponse>;
export type FreezeWindowResponse = z.infer<typeof FreezeWindowResponse>;

// Break-glass through a window in force (decision 0026): asked by one person, approved by a second with on-call.
// The domain names each wrong field (domain/break-glass.ts breakGlassErrors): the schema only keeps shapes.
export const BreakGlassBody = z.object({
  app: z.string().max(600).default(''),
  reason: z.string().max(2000).default(''),
  minutes: z.number().default(0),
});
export const BreakGlassParams = z.object({ id: z.string().uuid('not a break-glass id') });

export const BreakGlassSchema = z.object({
  id: z.string(),
  window: z.string(),
  app: z.string(),
  cluster: z.string(),
  env: z.string(),
  reason: z.string(),
  minutes: z.number(),
  requestedBy: z.string(),
  requestedAt: z.string(),
  /** requested → approved → ended; requested → lapsed (the occurrence ended first); failed: the freeze did not end */
  state: z.enum(['requested', 'approved', 'ended', 'lapsed', 'failed']),
  approvedBy: z.string().nullable(),
  approvedAt: z.string().nullable(),
  /** approved: when the window holds the app again */
  until: z.string().nullable(),
  /** the end of the occurrence it goes through */
  occurrenceUntil: z.string(),
  endedAt: z.string().nullable(),
  note: z.string().nullable(),
});
export type BreakGlassDto = z.infer<typeof BreakGlassSchema>;
export const BreakGlassResponse = z.object({ breakGlass: BreakGlassSchema });
export const BreakGlassListResponse = z.object({ requests: z.array(BreakGlassSchema) });
export type BreakGlassListResponse = z.infer<typeof BreakGlassListResponse>;

// An environment's calendar (issue 43): what holds or held its deploys in a range, and what was deployed. Planned
// windows' occurrences, the Argo CD sync windows of its apps' projects (read live), freezes (people's and windows'),
// and the releases that became live. A source that could not be read is listed in `unknown`, never left empty.
const CALENDAR_DAYS = 'days must be a whole number from 1 to 62';
export const EnvCalendarQuery = z.object({
  /** the range's start, an ISO 8601 time with its zone (default: now) */
  from: z
    .string()
    .max(64)
    .refine((s) => /(Z|[+-]\d{2}:?\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s)), {
      error: 'from is an ISO 8601 time with its zone, e.g. 2026-12-01T00:00:00+01:00',
    })
    .optional(),
  days: z.coerce
    .number({ error: CALENDAR_DAYS })
    .int(CALENDAR_DAYS)
    .min(1, CALENDAR_DAYS)
    .max(62, CALENDAR_DAYS)
    .default(30),
});

const CalendarWindowSchema = z.object({
  type: z.literal('window'),
  name: z.string(),
  reason: z.string(),
  from: z.string(),
  until: z.string(),
  /** the apps of this environment it covers that the reader may see */
  apps: z.array(z.string()),
});
const CalendarSyncWindowSchema = z.object({
  type: z.literal('sync-window'),
  cluster: z.string(),
  project: z.string(),
  kind: z.enum(['allow', 'deny']),
  /** the window's description, or its schedule and duration */
  label: z.string(),
  schedule: z.string(),
  duration: z.string(),
  timeZone: z.string().optional(),
  manualSync: z.boolean(),
  from: z.string(),
  until: z.string(),
  apps: z.array(z.string()),
});
const CalendarFreezeSchema = z.object({
  type: z.literal('freeze'),
  id: z.string(),
  reason: z.string(),
  createdBy: z.string(),
  /** the planned window that made it (absent: a person's freeze) */
  window: z.string().optional(),
  from: z.string(),
  /** its end, or its expiry while it holds */
  until: z.string(),
  active: z.boolean(),
  apps: z.array(z.string()),
});
const CalendarReleaseSchema = z.object({
  type: z.literal('release'),
  app: z.string(),
  sha: z.string(),
  at: z.string(),
  failed: z.boolean(),
});
export const EnvCalendarEntrySchema = z.discriminatedUnion('type', [
  CalendarWindowSchema,
  CalendarSyncWindowSchema,
  CalendarFreezeSchema,
  CalendarReleaseSchema,
]);
export type EnvCalendarEntry = z.infer<typeof EnvCalendarEntrySchema>;
export const EnvCalendarResponse = z.object({
  env: z.string(),
  from: z.string(),
  to: z.string(),
  /** in time order (a stretch by its start) */
  entries: z.array(EnvCalendarEntrySchema),
  /** sources that could not be read: what they would have added is unknown */
  unknown: z.array(z.object({ source: z.string(), why: z.string() })),
  /** a list was cut at its cap (occurrences of a window, releases, freezes read) */
  truncated: z.boolean(),
});
export type EnvCalendarResponse = z.infer<typeof EnvCalendarResponse>;
