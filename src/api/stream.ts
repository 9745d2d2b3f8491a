// The server-sent events of /api/stream.
import { z } from 'zod';
import { AppSummarySchema, ClusterStateSchema } from './apps.ts';

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
  // first on every stream: the catalog's version when it began (a list read at this version or later missed nothing)
  z.object({ type: z.literal('hello'), version: z.string() }),
]);
export type StreamMessage = z.infer<typeof StreamMessage>;
