// Shared pieces of the HTTP contract: the error body, object references, field owners and app ids in URLs.
// Every other file of src/api may import from here; this file imports nothing of them.
import { z } from 'zod';

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

export const FieldOwnerSchema = z.object({
  manager: z.string(),
  operation: z.enum(['Apply', 'Update']),
  time: z.string().optional(),
  subresource: z.string().optional(),
});

export const AppParams = z.object({
  cluster: z.string().min(1).max(253),
  namespace: z.string().min(1).max(253),
  kind: z.string().min(1).max(63),
  name: z.string().min(1).max(253),
});

export { appPath } from './plain.ts';
