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
