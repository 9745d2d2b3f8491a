// Incident freezes: create, extend and end them, and the live changes made while frozen.
import { z } from 'zod';
import { APP_KINDS, CONTROLLERS } from '../domain/app.ts';
import { ObjectRefSchema } from './common.ts';

// ---- incident freezes (issue 11) ------------------------------------------------------------------------

export const FreezeCreateBody = z.object({
  cluster: z.string().min(1, 'name the cluster'),
  env: z.string().min(1).optional(),
  app: z.string().min(1).optional(),
  // the domain names a missing reason, an expiry in the past or over the cap (freezeRequestErrors)
  reason: z.string().max(2000).default(''),
  incident: z.string().max(2000).optional(),
  minutes: z.number().optional(),
  // tests only: the length in seconds, refused unless the console allows it (CONSOLE_FREEZE_MIN_SECONDS)
  seconds: z.number().optional(),
});
export const FreezeExtendBody = z.object({ minutes: z.number(), reason: z.string().max(2000).default('') });
export const FreezeEndBody = z.object({
  decisions: z
    .array(z.object({ change: z.string().min(1), action: z.enum(['write-back', 'git-wins']) }))
    .max(1000)
    .default([]),
});
export const FreezeParams = z.object({ id: z.string().regex(/^frz-[0-9a-f]{8}$/, 'not a freeze id') });
export const FreezesQuery = z.object({
  active: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true'),
});

const FreezeTargetSchema = z.object({
  appId: z.string(),
  kind: z.enum(APP_KINDS),
  namespace: z.string(),
  name: z.string(),
  controller: z.enum(CONTROLLERS),
  env: z.string(),
  applied: z.boolean(),
  prior: z.unknown().optional(),
  /** Flux: the reconcile request the freeze carried, and when its controller was seen handling the suspend */
  controllerPause: z.object({ requested: z.string(), confirmed: z.string().optional() }).optional(),
  interference: z.object({ state: z.string(), at: z.string(), message: z.string() }).optional(),
  restored: z.object({ at: z.string(), ok: z.boolean(), detail: z.string().optional() }).optional(),
});

export const FreezeSchema = z.object({
  id: z.string(),
  cluster: z.string(),
  env: z.string().nullable(),
  app: z.string().nullable(),
  status: z.enum(['active', 'ending', 'ended', 'failed']),
  active: z.boolean(),
  reason: z.string(),
  incident: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.string(),
  startedAt: z.string(),
  expiresAt: z.string(),
  endedAt: z.string().nullable(),
  endedBy: z.string().nullable(),
  endReason: z.string().nullable(),
  targets: z.array(FreezeTargetSchema),
  extensions: z.array(
    z.object({ at: z.string(), by: z.string(), reason: z.string(), from: z.string(), to: z.string() }),
  ),
  decisions: z.array(z.object({ change: z.string(), action: z.enum(['write-back', 'git-wins']) })).optional(),
  writeBack: z
    .array(
      z.object({
        appId: z.string(),
        branch: z.string(),
        commit: z.string().nullable(),
        pullRequest: z.object({ number: z.number(), url: z.string() }).optional(),
        placements: z.array(z.unknown()),
        error: z.string().optional(),
      }),
    )
    .optional(),
  /** whether the asking user may extend / end it */
  canEnd: z.boolean(),
});
export type FreezeDto = z.infer<typeof FreezeSchema>;
export const FreezeResponse = z.object({ freeze: FreezeSchema });
export const FreezesResponse = z.object({ freezes: z.array(FreezeSchema) });

export const LiveChangeSchema = z.object({
  id: z.string(),
  appId: z.string(),
  ref: ObjectRefSchema,
  path: z.string(),
  /** absent: a field Git does not declare (added by hand); `live` absent: a field removed by hand */
  git: z.unknown().optional(),
  live: z.unknown().optional(),
  manager: z.string(),
  operation: z.string(),
  time: z.string(),
});
export type LiveChangeDto = z.infer<typeof LiveChangeSchema>;
export const FreezeChangesResponse = z.object({
  changes: z.array(LiveChangeSchema),
  /** apps whose diff could not be computed: their changes are unknown, never "none" */
  unknown: z.array(z.object({ appId: z.string(), reason: z.string() })),
});
