// Drift episodes (from managedFields) as the app and the tree carry them.
import { z } from 'zod';
import { ObjectRefSchema } from './common.ts';

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
