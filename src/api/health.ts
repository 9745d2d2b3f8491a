// Liveness (public GET /healthz) and the error code of actions refused while evidence cannot be recorded.
import { z } from 'zod';

// --- liveness (public GET /healthz) ---
export { EVIDENCE_UNAVAILABLE } from './plain.ts';
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
