// Response shapes the handlers send without a src/api zod schema of their own (the ApplicationSet pages, the
// canary actions, sign-out, readiness): written here for the OpenAPI document only. Each is held to the
// TypeScript type the handler returns by the compile-time checks at the bottom, so the document cannot say
// something the handler's type does not.
import { z } from 'zod';
import type { AppSetSummary, AppSetsResponse, AppSetView } from '../../api/appsets.ts';
import { FlaggerActionParams, RolloutActionParams } from '../apps/action-routes.ts';
import type { EvidenceRecorder, EvidenceStore } from '../evidence/index.ts';

const AppSetConditionSchema = z.object({
  type: z.string(),
  status: z.string(),
  reason: z.string().nullable(),
  message: z.string().nullable(),
});

export const AppSetSummarySchema = z.object({
  id: z.string(),
  cluster: z.string(),
  namespace: z.string(),
  name: z.string(),
  generators: z.array(z.string()),
  applications: z.array(z.object({ name: z.string(), appId: z.string() })),
  error: z.string().nullable(),
  heldByConsole: z.boolean(),
});

export const AppSetsListResponse = z.object({
  appsets: z.array(AppSetSummarySchema),
  unknown: z.array(z.string()),
});

export const AppSetViewSchema = AppSetSummarySchema.extend({
  uid: z.string(),
  goTemplate: z.boolean(),
  applicationsSync: z.string(),
  preserveResourcesOnDeletion: z.boolean(),
  generatorResults: z.array(
    z.object({
      kind: z.string(),
      detail: z.string(),
      params: z.array(z.record(z.string(), z.string())).nullable(),
      unknown: z.string().nullable(),
    }),
  ),
  generated: z.array(z.string()).nullable(),
  unknown: z.string().nullable(),
  owned: z.array(
    z.object({
      name: z.string(),
      appId: z.string(),
      generated: z.boolean().nullable(),
      sync: z.string(),
      health: z.string(),
      env: z.string().nullable(),
      resources: z.number(),
      cascades: z.boolean(),
    }),
  ),
  shrink: z.object({
    state: z.enum(['unknown', 'nothing', 'shrink']),
    reasons: z.array(z.string()),
    removed: z.array(z.object({ name: z.string(), resources: z.number(), cascades: z.boolean() })),
  }),
  conditions: z.array(AppSetConditionSchema),
  rollingSync: z
    .object({
      steps: z.array(
        z.object({
          matchExpressions: z.array(z.record(z.string(), z.unknown())),
          maxUpdate: z.union([z.string(), z.number()]).nullable(),
        }),
      ),
      applications: z.array(
        z.object({
          application: z.string(),
          status: z.string(),
          step: z.string().nullable(),
          message: z.string().nullable(),
        }),
      ),
    })
    .nullable(),
  limits: z.object({ maxDeletions: z.number(), maxFraction: z.number() }),
});

export const AppSetResponse = z.object({ appset: AppSetViewSchema });

/** POST …/rollouts/{rolloutNamespace}/{rollout}/{verb} (apps/rollout-actions.ts controlRollout) */
export const RolloutActionResponse = z.object({
  verb: RolloutActionParams.shape.verb,
  patches: z.number().int(),
  phase: z.string(),
});

/** POST …/canaries/{canaryNamespace}/{canary}/{verb} (apps/flagger-actions.ts controlFlaggerCanary) */
export const FlaggerActionResponse = z.object({
  verb: FlaggerActionParams.shape.verb,
  phase: z.string(),
  gate: z.string(),
});

export const SignOutResponse = z.object({ ok: z.literal(true) });

/** GET /readyz (app.ts): ready once every cluster has been tried; 503 with the same body while not */
export const ReadyzResponse = z.object({
  ready: z.boolean(),
  clusters: z.number().int(),
  connected: z.number().int(),
  store: z.enum(['sqlite', 'postgres']),
  evidence: z.object({
    pending: z.number().int(),
    failedAttempts: z.number().int(),
    refused: z.number().int(),
    failing: z.boolean(),
    lastError: z.string().optional(),
    lastFailureAt: z.string().optional(),
  }),
});

/** The body of GET /api/openapi.json: this document (OpenAPI 3.1) */
export const OpenApiDocumentSchema = z
  .object({ openapi: z.string(), info: z.record(z.string(), z.unknown()), paths: z.record(z.string(), z.unknown()) })
  .loose();

// --- compile-time: each schema says exactly what the handler's type says (both ways) ---
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(t: T): T => t;
same<Same<z.infer<typeof AppSetSummarySchema>, AppSetSummary>>(true);
same<Same<z.infer<typeof AppSetsListResponse>, AppSetsResponse>>(true);
same<Same<z.infer<typeof AppSetViewSchema>, AppSetView>>(true);
same<Same<z.infer<typeof ReadyzResponse>['evidence'], ReturnType<EvidenceRecorder['status']>>>(true);
same<Same<z.infer<typeof ReadyzResponse>['store'], EvidenceStore['kind']>>(true);
