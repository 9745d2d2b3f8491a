// Apps and clusters: the app list and detail, their queries, and the "reconcile now" request and its status.
import { z } from 'zod';
import { APP_KINDS, CONTROLLERS, HEALTH_STATES, SYNC_STATES } from '../domain/app.ts';
import { ENV_SOURCES } from '../domain/environments.ts';
import { ObjectRefSchema } from './common.ts';
import { AppDriftSchema } from './drift.ts';
import { DependencyStateSchema } from './dependencies.ts';
import { ImageAutomationSchema } from './image-automation.ts';

export const ConditionSchema = z.object({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
});

/** What the app object says of its freeze (annotations): shown on every page that shows the app. */
export const AppFreezeSchema = z.object({
  id: z.string(),
  by: z.string(),
  reason: z.string(),
  until: z.string(),
  incident: z.string().optional(),
});

export const AppSchema = z.object({
  id: z.string(),
  cluster: z.string(),
  controller: z.enum(CONTROLLERS),
  kind: z.enum(APP_KINDS),
  namespace: z.string(),
  name: z.string(),
  env: z.string(),
  /** where `env` came from (the console's mapping, the app's label, its namespace, or nowhere: `unknown`) */
  envSource: z.enum(ENV_SOURCES).optional(),
  /** the label disagrees with the console's mapping, or the mapping does not decide the app's environment */
  envConflict: z.string().optional(),
  source: z.object({
    kind: z.string().optional(),
    name: z.string().optional(),
    url: z.string().optional(),
    path: z.string().optional(),
    ref: z.string().optional(),
    revisionWanted: z.string().optional(),
    revisionObserved: z.string().optional(),
    revisionAttempted: z.string().optional(),
    artifactDigest: z.string().optional(),
    sourceReady: z.string().optional(),
  }),
  automation: z.object({ autoSync: z.boolean(), selfHeal: z.boolean(), prune: z.boolean(), suspended: z.boolean() }),
  sync: z.enum(SYNC_STATES),
  health: z.enum(HEALTH_STATES),
  healthMessage: z.string(),
  conditions: z.array(ConditionSchema),
  inventory: z.array(ObjectRefSchema),
  owner: z.object({ kind: z.string(), name: z.string() }).optional(),
  project: z.string().optional(),
  simulated: z.string().optional(),
  warnings: z.array(z.string()),
  links: z.array(z.object({ title: z.string(), url: z.string() })).optional(),
  /** Flux `spec.dependsOn`: the apps (same cluster, same kind) it is applied after */
  dependsOn: z.array(z.object({ namespace: z.string(), name: z.string() })).optional(),
  /** "waiting on infra-dev (not Ready: …)" while the controller holds it for a dependency */
  waitingOn: z.string().optional(),
  /** its controller's prune is denied by the console's policy until a preview is approved (domain/prune-hold.ts) */
  pruneHold: z.object({ objects: z.array(z.string()), count: z.number(), message: z.string() }).optional(),
  generation: z.number().optional(),
  observedGeneration: z.number().optional(),
  updatedAt: z.string().optional(),
  /** open drift episodes seen from managedFields (fast signal; the diff is the precise view) */
  drift: AppDriftSchema.optional(),
  /** set while the app is frozen (from its object's annotations) */
  freeze: AppFreezeSchema.optional(),
  /** Argo CD: its last (or running) sync operation, and why it is not synced yet */
  syncOperation: z
    .object({
      phase: z.string(),
      failing: z.boolean().optional(),
      revision: z.string().optional(),
      why: z.string().optional(),
      finishedAt: z.string().optional(),
    })
    .optional(),
});
export type AppDto = z.infer<typeof AppSchema>;

/** One entry of an Argo CD AppProject's `spec.syncWindows` (issue 43; domain/sync-windows.ts). */
export const SyncWindowSpecSchema = z.object({
  kind: z.enum(['allow', 'deny']),
  schedule: z.string(),
  duration: z.string(),
  applications: z.array(z.string()).optional(),
  namespaces: z.array(z.string()).optional(),
  clusters: z.array(z.string()).optional(),
  manualSync: z.boolean().optional(),
  timeZone: z.string().optional(),
  andOperator: z.boolean().optional(),
  description: z.string().optional(),
});
const SYNC_VERDICTS = ['allowed', 'blocked', 'unknown'] as const;
/** An Argo CD app's sync windows now, evaluated as Argo CD does (server/apps/sync-windows.ts). */
export const AppSyncWindowsSchema = z.object({
  project: z.string(),
  status: z.enum(['ok', 'unknown']),
  why: z.string().optional(),
  at: z.string(),
  windows: z.array(SyncWindowSpecSchema),
  automated: z.enum(SYNC_VERDICTS),
  manual: z.enum(SYNC_VERDICTS),
  active: z.array(z.object({ window: SyncWindowSpecSchema, until: z.string().optional() })),
  blockedBy: z.object({ window: SyncWindowSpecSchema, until: z.string().optional() }).optional(),
  nextChange: z.string().optional(),
  invalid: z.array(z.object({ window: SyncWindowSpecSchema, reason: z.string() })),
  warnings: z.array(z.object({ window: SyncWindowSpecSchema, reason: z.string() })),
});
export type AppSyncWindows = z.infer<typeof AppSyncWindowsSchema>;

/** The list view carries no inventory (it can be thousands of refs); the detail view does. */
export const AppSummarySchema = AppSchema.omit({ inventory: true }).extend({
  inventoryCount: z.number(),
  /** Argo CD: its sync windows hold automated syncs now (absent: they do not, or not an Argo CD app) */
  syncWindow: z
    .object({ automated: z.enum(['blocked', 'unknown']), reason: z.string(), until: z.string().optional() })
    .optional(),
});
export type AppSummary = z.infer<typeof AppSummarySchema>;

export const ClusterStateSchema = z.object({
  name: z.string(),
  server: z.string(),
  status: z.enum(['connecting', 'connected', 'unreachable']),
  since: z.string(),
  staleSince: z.string().optional(),
  reason: z.string().optional(),
  kinds: z.record(
    z.string(),
    z.object({ synced: z.boolean(), absent: z.boolean(), objects: z.number(), error: z.string().optional() }),
  ),
});
export type ClusterStateDto = z.infer<typeof ClusterStateSchema>;

export const ClustersResponse = z.object({ clusters: z.array(ClusterStateSchema) });
export const AppsResponse = z.object({
  apps: z.array(AppSummarySchema),
  total: z.number(),
  envs: z.array(z.string()),
  /**
   * `?first=N` (the overview's first paint): `apps` holds each environment × cluster group's first N apps
   * (those needing attention first), `groups` every group's size; the SPA reads the whole list after it paints.
   */
  partial: z.literal(true).optional(),
  groups: z.array(z.object({ env: z.string(), cluster: z.string(), count: z.number() })).optional(),
  /** the catalog's version this list was read at (`<replica boot>:<changes>`; the stream's hello carries it too) */
  version: z.string().optional(),
});
export type AppsResponse = z.infer<typeof AppsResponse>;
/** An Argo CD sync operation as it runs (domain/argo-sync.ts): its steps (PreSync, Sync by wave, PostSync). */
export const ArgoSyncTaskSchema = z.object({
  group: z.string(),
  kind: z.string(),
  namespace: z.string().optional(),
  name: z.string(),
  syncPhase: z.string(),
  hookType: z.string().optional(),
  hookPhase: z.string().optional(),
  status: z.string().optional(),
  message: z.string().optional(),
  wave: z.number().optional(),
});
export const ArgoSyncSchema = z.object({
  phase: z.string(),
  message: z.string().optional(),
  revision: z.string().optional(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  initiatedBy: z.string().optional(),
  /** "why is this app not synced yet?" in one sentence; absent when the last sync succeeded */
  why: z.string().optional(),
  steps: z.array(z.object({ phase: z.string(), wave: z.number().optional(), tasks: z.array(ArgoSyncTaskSchema) })),
});
export type ArgoSyncDto = z.infer<typeof ArgoSyncSchema>;

/** An Argo Rollouts Rollout the app manages, as a person reads a canary (domain/rollout.ts rolloutView). */
export const RolloutSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  strategy: z.enum(['canary', 'blueGreen', 'unknown']),
  phase: z.string(),
  message: z.string(),
  weight: z.number(),
  currentStep: z.number().nullable(),
  steps: z.array(
    z.object({
      index: z.number(),
      text: z.string(),
      kind: z.enum(['setWeight', 'pause', 'analysis', 'other']),
      state: z.enum(['done', 'current', 'pending']),
    }),
  ),
  paused: z.object({ reasons: z.array(z.string()), since: z.string().nullable() }).nullable(),
  aborted: z.boolean(),
  stableHash: z.string().nullable(),
  canaryHash: z.string().nullable(),
  replicas: z.object({ desired: z.number(), updated: z.number(), ready: z.number(), available: z.number() }),
  analysis: z.object({ name: z.string(), status: z.string(), message: z.string().nullable() }).nullable(),
});
export type RolloutDto = z.infer<typeof RolloutSchema>;

/** A Flagger Canary the app manages (domain/flagger.ts flaggerCanaryView). */
export const FlaggerCanarySchema = z.object({
  namespace: z.string(),
  name: z.string(),
  target: z.string(),
  primary: z.string(),
  provider: z.string(),
  phase: z.string(),
  message: z.string(),
  iteration: z.number(),
  iterations: z.number().nullable(),
  failedChecks: z.number(),
  threshold: z.number().nullable(),
  weight: z.number(),
  lastAppliedSpec: z.string().nullable(),
  lastPromotedSpec: z.string().nullable(),
  lastTransitionTime: z.string().nullable(),
  webhooks: z.array(z.object({ name: z.string(), type: z.string(), url: z.string() })),
  waitingForPromotion: z.boolean(),
  failed: z.boolean(),
  suspended: z.boolean(),
});
export type FlaggerCanaryDto = z.infer<typeof FlaggerCanarySchema>;

export const AppResponse = z.object({
  app: AppSchema,
  cluster: ClusterStateSchema.optional(),
  /** Argo CD: its last (or running) sync operation */
  sync: ArgoSyncSchema.optional(),
  /** the Argo Rollouts Rollouts it manages */
  rollouts: z.array(RolloutSchema).optional(),
  /** the Flagger Canaries it manages */
  canaries: z.array(FlaggerCanarySchema).optional(),
  /** Flux: what it depends on, each with its Ready; and the apps that depend on it */
  dependencies: z.array(DependencyStateSchema).optional(),
  dependents: z.array(z.object({ id: z.string(), name: z.string(), waitingOn: z.string().optional() })).optional(),
  /** Flux: the image automation writing its image tags to Git (absent: not a Flux Kustomization) */
  imageAutomation: ImageAutomationSchema.optional(),
  /** Argo CD: its AppProject's sync windows that apply to it, now (absent: not an Argo CD app) */
  syncWindows: AppSyncWindowsSchema.optional(),
});
export type AppResponse = z.infer<typeof AppResponse>;

export const AppsQuery = z.object({
  cluster: z.string().max(253).optional(),
  env: z.string().max(253).optional(),
  controller: z.enum(CONTROLLERS).optional(),
  health: z.enum(HEALTH_STATES).optional(),
  sync: z.enum(SYNC_STATES).optional(),
  q: z.string().max(200).optional(),
  /** true: only apps with an open drift episode; false: only apps without */
  drifted: z.enum(['true', 'false']).optional(),
  /** the overview's first page: each group's first N apps and every group's size */
  first: z.coerce.number().int().min(1).max(1000).optional(),
});
export type AppsQuery = z.infer<typeof AppsQuery>;

export const ReconcileResponse = z.object({ requestedAt: z.string(), objects: z.array(z.string()) });

/** What became of a "reconcile now" request: the controller's acknowledgement, followed by the SPA. */
export const RECONCILE_STATES = ['pending', 'reconciled', 'failed', 'timeout'] as const;
export const ReconcileStatusQuery = z.object({ requestedAt: z.iso.datetime() });
export const ReconcileStatusResponse = z.object({
  state: z.enum(RECONCILE_STATES),
  requestedAt: z.string(),
  /** when the controller finished handling the request (its status write), once it has */
  reconciledAt: z.string().optional(),
  /** the revision applied (Flux lastAppliedRevision; Argo CD status.sync.revision) */
  revision: z.string().optional(),
  /** drifted fields the controller took back after the request (ended drift episodes) */
  reverted: z.array(z.object({ object: z.string(), path: z.string(), managers: z.array(z.string()) })),
  /** Ready=False (Flux) or the failed operation (Argo CD), or why nothing happened */
  reason: z.string().optional(),
  message: z.string().optional(),
  /** after this long without an acknowledgement the state is `timeout` */
  timeoutMs: z.number(),
});
export type ReconcileStatusResponse = z.infer<typeof ReconcileStatusResponse>;
