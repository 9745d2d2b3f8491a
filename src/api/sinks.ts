// Event sinks (issue 28): where the evidence goes as CDEvents, how far each sink has heard, and its dead letters.
//   GET  /api/sinks                               every sink's health and dead letters (admin on every cluster)
//   POST /api/sinks/:name/dead-letters/:seq/retry  one more attempt now (admin; intent recorded first)
import { z } from 'zod';

export const DeadLetter = z.object({
  sink: z.string(),
  seq: z.number().int().positive(),
  attempts: z.number().int().nonnegative(),
  lastError: z.string(),
  firstFailedAt: z.string(),
  deadAt: z.string(),
});
export type DeadLetter = z.infer<typeof DeadLetter>;

export const SinkStatus = z.object({
  name: z.string(),
  url: z.string(),
  /** CDEvents, or a notifications sink (Slack-compatible or generic JSON bodies) */
  format: z.enum(['cdevents', 'slack', 'json']).default('cdevents'),
  running: z.boolean(),
  cursor: z.number().int().nullable(),
  head: z.number().int().nullable(),
  lag: z.number().int().nullable(),
  delivered: z.number().int().nonnegative(),
  failedAttempts: z.number().int().nonnegative(),
  deadLettered: z.number().int().nonnegative(),
  down: z.boolean(),
  lastError: z.string().nullable(),
  lastDeliveredAt: z.string().nullable(),
  retrying: z.object({ seq: z.number().int(), attempts: z.number().int(), since: z.string() }).nullable(),
  /** the first dead letters by seq (at most 200) and how many there are */
  deadLetters: z.array(DeadLetter),
  deadLetterCount: z.number().int().nonnegative(),
});
export type SinkStatus = z.infer<typeof SinkStatus>;

export const SinksResponse = z.object({
  sinks: z.array(SinkStatus),
  /** this replica delivers (it holds the recorder Lease, or there is one replica); counters are this replica's */
  delivering: z.boolean(),
});
export type SinksResponse = z.infer<typeof SinksResponse>;

export const RetryDeadLetterParams = z.object({
  name: z.string().regex(/^[a-z0-9-]{1,63}$/),
  seq: z.coerce.number().int().positive(),
});
export const RetryDeadLetterResponse = z.object({ ok: z.boolean(), error: z.string().optional() });
export type RetryDeadLetterResponse = z.infer<typeof RetryDeadLetterResponse>;
