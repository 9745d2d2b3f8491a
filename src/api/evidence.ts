// The evidence log: its events, the browser's and the export's filters, chain verification and checkpoints.
import { z } from 'zod';
import { EVIDENCE_TYPES } from '../domain/evidence.ts';

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

/** The first field of an export's trailer (its last line, or the CSV row whose `seq` cell is `trailer`). */
export const EXPORT_TRAILER_V1 = 'gitops-console evidence export v1';
/** What an export left out: null for a full export (every event up to the head). */
export const EvidenceExportFilter = z
  .object({
    /** the query's filters (the store's names: app, cluster, env, actor, type, from, to, text) */
    query: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
    /** events outside the reader's evidence.read grants were left out: those grants */
    permissions: z.array(z.string()).optional(),
  })
  .strict();
export type EvidenceExportFilter = z.infer<typeof EvidenceExportFilter>;
/**
 * The signed trailer that ends every export (docs/guide/auditor.md, "Export and independent verification"). `signature` is
 * Ed25519, by the checkpoint key (`keyId`: sha256 of its SPKI DER), over the text
 * "gitops-console evidence export trailer v1\n" + canonical JSON of every other field.
 */
export const EvidenceExportTrailer = z
  .object({
    trailer: z.literal(EXPORT_TRAILER_V1),
    format: z.enum(['jsonl', 'csv']),
    time: z.string(),
    filter: EvidenceExportFilter.nullable(),
    /** the first and last event in the file and how many (null, null, 0: none) */
    firstSeq: z.number().int().positive().nullable(),
    lastSeq: z.number().int().positive().nullable(),
    count: z.number().int().nonnegative(),
    /** the hash of the last event in the file */
    lastHash: z.string().nullable(),
    /** the chain's head when the export started (a full export ends there) */
    headSeq: z.number().int().nonnegative(),
    headHash: z.string(),
    /** sha256 (hex) of every event's hash followed by "\n", in file order */
    digest: z.string(),
    keyId: z.string().nullable(),
    signature: z.string().nullable(),
  })
  .strict();
export type EvidenceExportTrailer = z.infer<typeof EvidenceExportTrailer>;
/** the stored manifests per release (issue 28), each checked against its render hash */
const ManifestsChecked = z.object({
  checked: z.number(),
  tampered: z.array(z.string()),
  /** tombstones: expired under retention, each by an expiry the chain holds */
  expired: z.number().default(0),
  /** tombstones the chain holds no expiry of (a body removed behind the console's back): the first 20 */
  unproven: z.array(z.string()).default([]),
});
export const VerifyResponse = z.union([
  z.object({
    ok: z.literal(true),
    count: z.number(),
    head: z.string(),
    checkpoints: z.number().optional(),
    manifests: ManifestsChecked.optional(),
  }),
  z.object({
    ok: z.literal(false),
    count: z.number(),
    brokenAt: z.number(),
    reason: z.string(),
    checkpoint: z.object({ seq: z.number(), time: z.string() }).optional(),
    manifests: ManifestsChecked.optional(),
  }),
]);
export type VerifyResponse = z.infer<typeof VerifyResponse>;
export const EvidenceCheckpointsResponse = z.object({
  checkpoints: z.array(z.object({ seq: z.number(), hash: z.string(), time: z.string(), signature: z.string() })),
});
