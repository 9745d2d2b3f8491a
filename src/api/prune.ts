// Prune previews: the plan, its candidates, the approvals and the deletion journal.
import { z } from 'zod';
import { ObjectRefSchema } from './common.ts';

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
  /**
   * a protected object its deletion would take with it ("its Pod dev/x is protected (…)"): listed, not deleted;
   * absent in previews stored before this existed
   */
  blockedBy: z.string().nullable().optional(),
  /**
   * why what its deletion would take with it is not fully known ("cannot list secrets in ns x: the namespace's
   * contents are unknown"): listed, not deleted; absent in older previews
   */
  cascadesUnknown: z.string().nullable().optional(),
  /** what its deletion takes with it: ownerReferences children, a Namespace's contents (every kind listed), a CRD's custom resources */
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
  /**
   * a done prune its controller performs (`deletedBy: controller`): what the controller did with the stamped
   * objects since, read live on each view. `waiting`: some still live (same uid); `deleted`: none is; `lapsed`: one
   * outlived its approval listing (the controller may no longer delete it); `unknown`: they could not be read.
   */
  handover: z
    .object({
      state: z.enum(['waiting', 'deleted', 'lapsed', 'unknown']),
      controller: z.string(),
      live: z.array(z.string()),
      stamped: z.number(),
      text: z.string(),
    })
    .optional(),
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
