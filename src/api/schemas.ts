// The HTTP contract between the BFF and the SPA. The BFF validates its
// responses with these schemas; the SPA parses what it receives with them.
import { z } from 'zod';
import { APP_KINDS, CONTROLLERS, HEALTH_STATES, SYNC_STATES } from '../domain/app.ts';
import { ROLES } from '../domain/access.ts';
import { EVIDENCE_TYPES } from '../domain/evidence.ts';
import { NODE_SYNC } from '../domain/tree.ts';
import { CHANGE_CLASSES } from '../domain/field-diff.ts';
import { RELEASE_STATES } from '../domain/release.ts';

export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    cluster: z.string().optional(),
    /** names the BFF's log lines of a failed request (5xx) */
    requestId: z.string().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const ObjectRefSchema = z.object({
  cluster: z.string(),
  group: z.string(),
  version: z.string(),
  kind: z.string(),
  namespace: z.string().optional(),
  name: z.string(),
});

export const ConditionSchema = z.object({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
});

const DriftFieldSchema = z.object({ path: z.string(), from: z.unknown().optional(), to: z.unknown().optional() });
export const AppDriftSchema = z.object({
  since: z.string(),
  lastWriteAt: z.string(),
  kind: z.enum(['person', 'conflict']),
  managers: z.array(z.string()),
  objectCount: z.number(),
  objects: z.array(
    z.object({
      ref: ObjectRefSchema,
      kind: z.enum(['person', 'conflict']),
      managers: z.array(z.string()),
      fields: z.array(DriftFieldSchema),
      since: z.string(),
      lastWriteAt: z.string(),
      writes: z.number(),
      afterApplyMs: z.number().optional(),
    }),
  ),
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
  generation: z.number().optional(),
  observedGeneration: z.number().optional(),
  updatedAt: z.string().optional(),
  /** open drift episodes seen from managedFields (fast signal; the diff is the precise view) */
  drift: AppDriftSchema.optional(),
  /** set while the app is frozen (from its object's annotations) */
  freeze: AppFreezeSchema.optional(),
});
export type AppDto = z.infer<typeof AppSchema>;

/** The list view carries no inventory (it can be thousands of refs); the detail view does. */
export const AppSummarySchema = AppSchema.omit({ inventory: true }).extend({ inventoryCount: z.number() });
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
});
export type AppsResponse = z.infer<typeof AppsResponse>;
export const AppResponse = z.object({ app: AppSchema, cluster: ClusterStateSchema.optional() });
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
});
export type AppsQuery = z.infer<typeof AppsQuery>;

export const AppParams = z.object({
  cluster: z.string().min(1).max(253),
  namespace: z.string().min(1).max(253),
  kind: z.string().min(1).max(63),
  name: z.string().min(1).max(253),
});

export const EvidenceEventSchema = z.object({
  seq: z.number(),
  time: z.string(),
  type: z.enum(EVIDENCE_TYPES),
  actor: z.string(),
  app: z.string().nullable().optional(),
  cluster: z.string().nullable().optional(),
  env: z.string().nullable().optional(),
  data: z.record(z.string(), z.unknown()),
  prevHash: z.string(),
  hash: z.string(),
});
/** `nextCursor`: pass it as `before` for the next (older) page; null at the end */
export const EvidenceResponse = z.object({
  events: z.array(EvidenceEventSchema),
  nextCursor: z.number().nullable().default(null),
});
const isoTime = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)), 'not a date and time')
  .transform((s) => new Date(s).toISOString());
/** the evidence browser's and the export's filters: one type or several (`type=a&type=b` or `type=a,b`) */
export const EvidenceFilterSchema = z.object({
  app: z.string().max(600).optional(),
  cluster: z.string().max(253).optional(),
  env: z.string().max(253).optional(),
  actor: z.string().max(600).optional(),
  type: z
    .preprocess(
      (v) => (typeof v === 'string' ? v.split(',').filter(Boolean) : v),
      z.array(z.enum(EVIDENCE_TYPES)).max(EVIDENCE_TYPES.length),
    )
    .optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
  /** case-insensitive text search over actor, type, app and data */
  q: z.string().max(200).optional(),
});
export type EvidenceFilter = z.infer<typeof EvidenceFilterSchema>;
export const EvidenceQuerySchema = EvidenceFilterSchema.extend({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});
export const EvidenceExportQuery = EvidenceFilterSchema.extend({ format: z.enum(['jsonl', 'csv']).default('jsonl') });
export const VerifyResponse = z.union([
  z.object({ ok: z.literal(true), count: z.number(), head: z.string(), checkpoints: z.number().optional() }),
  z.object({
    ok: z.literal(false),
    count: z.number(),
    brokenAt: z.number(),
    reason: z.string(),
    checkpoint: z.object({ seq: z.number(), time: z.string() }).optional(),
  }),
]);
export type VerifyResponse = z.infer<typeof VerifyResponse>;
export const EvidenceCheckpointsResponse = z.object({
  checkpoints: z.array(z.object({ seq: z.number(), hash: z.string(), time: z.string(), signature: z.string() })),
});

/** Server-sent events on /api/stream */
export const StreamMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('app-upsert'), app: AppSummarySchema }),
  z.object({ type: z.literal('app-delete'), id: z.string() }),
  z.object({ type: z.literal('cluster'), cluster: ClusterStateSchema }),
  z.object({ type: z.literal('app-objects'), id: z.string() }),
  // a prune preview or a freeze changed (on any replica): ids only, the page refetches what it shows
  z.object({ type: z.literal('state'), kind: z.enum(['prune', 'freeze']), id: z.string(), app: z.string().optional() }),
  // this replica may have missed changes of others: refetch everything shown
  z.object({ type: z.literal('resync') }),
]);
export type StreamMessage = z.infer<typeof StreamMessage>;

export function appPath(id: string): string {
  return id.split('/').map(encodeURIComponent).join('/');
}

// ---- resource tree (issue: per-app sync and health tree)

/** An object's open drift episode, as a tree node carries it */
export const NodeDriftSchema = z.object({
  kind: z.enum(['person', 'conflict']),
  managers: z.array(z.string()),
  fields: z.array(DriftFieldSchema),
  since: z.string(),
  lastWriteAt: z.string(),
  writes: z.number(),
});
export type NodeDriftDto = z.infer<typeof NodeDriftSchema>;

export const TreeNodeSchema = z.object({
  id: z.string(),
  ref: ObjectRefSchema,
  uid: z.string().optional(),
  parentId: z.string().optional(),
  depth: z.number(),
  childCount: z.number(),
  managed: z.boolean(),
  health: z.enum(HEALTH_STATES),
  sync: z.enum(NODE_SYNC).optional(),
  reason: z.string(),
  createdAt: z.string().optional(),
  lastManager: z
    .object({
      manager: z.string(),
      operation: z.string(),
      time: z.string().optional(),
      subresource: z.string().optional(),
    })
    .optional(),
  /** set when the object has an open drift episode (the tracker's fast signal) */
  drift: NodeDriftSchema.optional(),
});
export type TreeNodeDto = z.infer<typeof TreeNodeSchema>;
export const TreeResponse = z.object({
  appId: z.string(),
  generatedAt: z.string(),
  summary: z.object({
    health: z.enum(HEALTH_STATES),
    reason: z.string(),
    counts: z.record(z.string(), z.number()),
    sync: z.record(z.string(), z.number()),
    total: z.number(),
  }),
  nodes: z.array(TreeNodeSchema),
  /** true when only the first levels were requested (?depth=N) */
  partial: z.boolean().optional(),
});
export type TreeResponse = z.infer<typeof TreeResponse>;

// Object references are spliced into apiserver paths: only the shapes Kubernetes allows (no `/`, no `..`).
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const ObjectQuery = z.object({
  group: z.union([z.literal(''), z.string().max(253).regex(DNS_SUBDOMAIN, 'not an API group')]).default(''),
  version: z
    .string()
    .max(63)
    .regex(/^v[0-9]+((alpha|beta)[0-9]+)?$/, 'not an API version'),
  kind: z
    .string()
    .max(63)
    .regex(/^[A-Za-z][A-Za-z0-9]*$/, 'not a kind'),
  namespace: z
    .union([
      z.literal(''),
      z
        .string()
        .max(63)
        .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'not a namespace'),
    ])
    .optional(),
  name: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[^/%]+$/, 'not an object name')
    .refine((n) => n !== '.' && n !== '..', 'not an object name'),
});
export const FieldOwnerSchema = z.object({
  manager: z.string(),
  operation: z.enum(['Apply', 'Update']),
  time: z.string().optional(),
  subresource: z.string().optional(),
});
export const ObjectResponse = z.object({
  ref: ObjectRefSchema,
  yaml: z.string(),
  owners: z.record(z.string(), z.array(FieldOwnerSchema)),
  managers: z.array(z.string()),
});
export type ObjectResponse = z.infer<typeof ObjectResponse>;
export const EventsResponse = z.object({
  events: z.array(
    z.object({
      type: z.string(),
      reason: z.string(),
      message: z.string(),
      count: z.number(),
      lastSeen: z.string().optional(),
      source: z.string().optional(),
    }),
  ),
});
export type EventsResponse = z.infer<typeof EventsResponse>;

// ---- Git-versus-live diff

export const FieldChangeSchema = z.object({
  path: z.string(),
  desired: z.unknown().optional(),
  predicted: z.unknown().optional(),
  live: z.unknown().optional(),
  owners: z.array(FieldOwnerSchema),
  class: z.enum(CHANGE_CLASSES),
});
export type FieldChangeDto = z.infer<typeof FieldChangeSchema>;
export const ObjectDiffSchema = z.object({
  ref: ObjectRefSchema,
  status: z.enum(['changed', 'missing', 'extraneous', 'unchanged', 'unknown']),
  mode: z.enum(['server-dry-run', 'normalized']),
  note: z.string().optional(),
  changes: z.array(FieldChangeSchema),
  desiredYaml: z.string().optional(),
  liveYaml: z.string().optional(),
  predictedYaml: z.string().optional(),
});
export type ObjectDiffDto = z.infer<typeof ObjectDiffSchema>;
export const DiffResponse = z.object({
  appId: z.string(),
  generatedAt: z.string(),
  state: z.enum(['ok', 'unknown']),
  error: z.string().optional(),
  render: z
    .object({
      renderer: z.string(),
      revision: z.string(),
      artifactDigest: z.string().optional(),
      renderHash: z.string(),
    })
    .optional(),
  counts: z.record(z.string(), z.number()),
  summary: z.string(),
  objects: z.array(ObjectDiffSchema),
  /** what a prune preview would plan from the extraneous rows (the same rules: the diff and the plan agree) */
  prune: z
    .object({
      state: z.enum(['unknown', 'nothing', 'ready', 'needs-override']),
      reasons: z.array(z.string()),
      deletions: z.number(),
      protected: z.number(),
    })
    .optional(),
  /** the render has no objects while the app tracks some (the summary says what that would mean) */
  emptyRender: z.boolean().optional(),
  ownership: z.array(
    z.object({
      manager: z.string(),
      fields: z.number(),
      objects: z.number(),
      conflicts: z.array(z.object({ object: z.string(), path: z.string(), with: z.array(z.string()) })),
    }),
  ),
  /**
   * What the BFF did for this diff: renders run (0 when the render for this revision was cached), server-side
   * dry-runs sent (only objects whose desired or live state changed), object results reused, and whether the
   * request shared a concurrent identical one.
   */
  work: z
    .object({
      renders: z.number().int().nonnegative(),
      dryRuns: z.number().int().nonnegative(),
      cachedObjects: z.number().int().nonnegative(),
      coalesced: z.boolean(),
    })
    .optional(),
});
export type DiffResponse = z.infer<typeof DiffResponse>;

export const EnvCompareResponse = z.object({
  envs: z.array(
    z.object({
      env: z.string(),
      appId: z.string(),
      cluster: z.string(),
      revision: z.string().optional(),
      renderHash: z.string().optional(),
      error: z.string().optional(),
    }),
  ),
  images: z.array(
    z.object({
      object: z.string(),
      container: z.string(),
      byEnv: z.record(z.string(), z.object({ ref: z.string(), pinned: z.enum(['digest', 'tag']) })),
    }),
  ),
  fields: z.array(z.object({ object: z.string(), path: z.string(), byEnv: z.record(z.string(), z.unknown()) })),
});
export type EnvCompareResponse = z.infer<typeof EnvCompareResponse>;

// --- identity ---
export const GrantSchema = z.object({
  role: z.enum(ROLES),
  clusters: z.array(z.string()),
  envs: z.array(z.string()),
});
export const SessionResponse = z.object({
  user: z.object({
    name: z.string(),
    source: z.enum(['local', 'oidc']),
    groups: z.array(z.string()),
    grants: z.array(GrantSchema),
  }),
  csrfToken: z.string(),
  mustChangePassword: z.boolean(),
  expiresAt: z.string(),
  oidc: z.boolean(),
});
export type SessionResponse = z.infer<typeof SessionResponse>;
export const ProvidersResponse = z.object({ local: z.boolean(), oidc: z.boolean() });
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

// --- liveness (public GET /healthz) ---
/** The error code of an action refused because the evidence store cannot record it (503). */
export const EVIDENCE_UNAVAILABLE = 'EvidenceUnavailable';
export const HealthzResponse = z.object({
  ok: z.literal(true),
  /** the evidence recorder's backlog: records waiting to be written, whether writes fail, actions refused */
  evidence: z.object({
    pending: z.number().int().nonnegative(),
    failing: z.boolean(),
    refused: z.number().int().nonnegative(),
  }),
});
export type HealthzResponse = z.infer<typeof HealthzResponse>;

// --- prune previews (issue 9): a plan, approved by a second person, executed by the BFF ---
export const PRUNE_PREVIEW_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'executing',
  'done',
  'failed',
  'void',
] as const;
export const PrunePreviewStatusSchema = z.enum(PRUNE_PREVIEW_STATUSES);
export const PRUNE_PLAN_STATES = ['unknown', 'nothing', 'ready', 'needs-override'] as const;
const PruneIdentitySchema = z.object({ issuer: z.string(), subject: z.string(), name: z.string() });
export const PruneCandidateSchema = z.object({
  ref: ObjectRefSchema,
  id: z.string(),
  uid: z.string().nullable(),
  resourceVersion: z.string().nullable(),
  /** the annotation/label that protects it, verbatim: listed, never deleted */
  protectedBy: z.string().nullable(),
  cascades: z.array(ObjectRefSchema),
  finalizers: z.array(z.string()),
  createdAt: z.string().nullable(),
  lastWriter: z.string().nullable(),
  deletable: z.boolean(),
});
export const PruneDecisionSchema = PruneIdentitySchema.extend({
  decision: z.enum(['approve', 'reject']),
  comment: z.string(),
  time: z.string(),
  evidenceSeq: z.number().optional(),
});
export const PruneJournalEntrySchema = z.object({
  position: z.number(),
  batch: z.number(),
  object: z.string(),
  // stamping/stamped: the console stamped its approval on the object; the controller's own prune deletes it
  state: z.enum(['planned', 'deleting', 'deleted', 'gone', 'failed', 'not-deleted', 'stamping', 'stamped']),
  detail: z.string().nullable(),
  updatedAt: z.string(),
});
export const PrunePreviewSchema = z.object({
  id: z.string(),
  appId: z.string(),
  cluster: z.string(),
  env: z.string(),
  controller: z.enum(['flux', 'argocd']),
  revision: z.string().nullable(),
  renderHash: z.string().nullable(),
  plan: z.enum(PRUNE_PLAN_STATES),
  /** why the plan is unknown, or why it needs an override */
  reasons: z.array(z.string()),
  status: PrunePreviewStatusSchema,
  statusReason: z.string().nullable(),
  snapshotHash: z.string(),
  requestedBy: PruneIdentitySchema,
  createdAt: z.string(),
  expiresAt: z.string(),
  requiredApprovals: z.number(),
  /** needs-override: the text an approver types to confirm */
  confirmation: z.string().nullable(),
  propagationPolicy: z.enum(['Background', 'Foreground', 'Orphan']),
  batchSize: z.number(),
  /**
   * who deletes after the approval: the console itself (the controller does not prune: Flux `prune: false`), or
   * the controller's own prune once the console stamped the approval on each object (the admission policy in
   * deploy/prune-admission-policy.yaml denies its other deletions)
   */
  deletedBy: z.enum(['console', 'controller']).optional(),
  decisions: z.array(PruneDecisionSchema),
  candidates: z.array(PruneCandidateSchema),
  summary: z.object({
    candidates: z.number(),
    protected: z.number(),
    deletions: z.number(),
    cascades: z.number(),
  }),
  journal: z.array(PruneJournalEntrySchema),
});
export type PrunePreview = z.infer<typeof PrunePreviewSchema>;
export const PrunePreviewResponse = z.object({
  preview: PrunePreviewSchema,
  /** whether the signed-in user may approve it now, and why not */
  viewer: z.object({ canApprove: z.boolean(), reason: z.string().nullable() }),
});
export type PrunePreviewResponse = z.infer<typeof PrunePreviewResponse>;
export const PrunePreviewsQuery = z.object({ state: PrunePreviewStatusSchema.optional() });
export const PrunePreviewSummarySchema = PrunePreviewSchema.omit({
  candidates: true,
  journal: true,
  decisions: true,
}).extend({
  approvals: z.number(),
});
export const PrunePreviewsResponse = z.object({ previews: z.array(PrunePreviewSummarySchema) });
export type PrunePreviewsResponse = z.infer<typeof PrunePreviewsResponse>;
export const PrunePreviewParams = z.object({ id: z.uuid() });
export const PruneDecisionBody = z.object({
  comment: z.string().trim().min(1, 'say why').max(2000),
  /** needs-override only: the preview's confirmation text, typed */
  confirmation: z.string().max(500).optional(),
});
export type PruneDecisionBody = z.infer<typeof PruneDecisionBody>;

// ---- incident freezes (issue 11) ------------------------------------------------------------------------

export const FreezeCreateBody = z.object({
  cluster: z.string().min(1, 'name the cluster'),
  env: z.string().min(1).optional(),
  app: z.string().min(1).optional(),
  // the domain names a missing reason, an expiry in the past or over the cap (freezeRequestErrors)
  reason: z.string().max(2000).default(''),
  incident: z.string().max(2000).optional(),
  minutes: z.number().optional(),
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
  prior: z.unknown(),
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
  git: z.unknown(),
  live: z.unknown(),
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

// ---- releases (issue 16): one row per release of an app, its nine states as a chain ----
export const ReleaseStateSchema = z.object({
  name: z.enum(RELEASE_STATES),
  step: z.number(),
  status: z.enum(['ok', 'failed', 'unknown', 'pending']),
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
    leadTime: z.object({ median: nullableSeconds, p90: nullableSeconds, n: z.number() }),
    /** rate null when total = 0 (unknown, not 0 %); `open`: deployments whose failure window is still open */
    changeFailureRate: z.object({
      failed: z.number(),
      total: z.number(),
      rate: z.number().nullable(),
      open: z.number(),
    }),
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
