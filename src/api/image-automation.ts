// Flux image automation (issue 26 part 5): the automations writing an app's image tags to Git, the policies
// they apply and the registries those choose from, as the app page shows them (domain/image-automation.ts).
import { z } from 'zod';

const READY = ['True', 'False', 'Unknown'] as const;
const opt = z.string().optional();

const ReadySchema = z.object({ status: z.enum(READY), reason: opt, message: opt });

export const ImageAutomationSchema = z.object({
  /** unknown: an image kind could not be read; the lists are then not "none" */
  status: z.enum(['ok', 'unknown']),
  why: opt,
  automations: z.array(
    z.object({
      namespace: z.string(),
      name: z.string(),
      ready: ReadySchema,
      suspended: z.boolean(),
      source: z.object({ kind: z.string(), namespace: z.string(), name: z.string(), url: opt }),
      checkoutBranch: opt,
      pushBranch: opt,
      updatePath: z.string(),
      author: z.object({ name: z.string(), email: z.string() }),
      lastPushCommit: opt,
      lastPushTime: opt,
      lastRunTime: opt,
      observed: z.array(z.object({ policy: z.string(), image: z.string(), tag: z.string(), digest: opt })),
      policies: z.array(z.string()),
    }),
  ),
  policies: z.array(
    z.object({
      namespace: z.string(),
      name: z.string(),
      ready: ReadySchema,
      rule: z.string(),
      filter: opt,
      repository: z.object({ namespace: z.string(), name: z.string(), image: opt }),
      chosen: z.object({ image: z.string(), tag: z.string(), digest: opt }).optional(),
      previous: z.object({ tag: z.string(), digest: opt }).optional(),
    }),
  ),
  repositories: z.array(
    z.object({
      namespace: z.string(),
      name: z.string(),
      image: z.string(),
      ready: ReadySchema,
      tagCount: z.number().optional(),
      latestTags: z.array(z.string()),
      scanTime: opt,
    }),
  ),
});
export type ImageAutomationDto = z.infer<typeof ImageAutomationSchema>;
