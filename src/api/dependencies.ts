// Flux dependencies (issue 26): an app's `dependsOn` with each dependency's Ready, and the graph of an
// environment's apps ("why isn't my app reconciling yet?").
import { z } from 'zod';

const READY = ['True', 'False', 'Unknown'] as const;

export const DependencyStateSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  /** the app id when the console knows it (same cluster, same kind); null: unknown, never Ready */
  id: z.string().nullable(),
  ready: z.enum(READY),
  reason: z.string().nullable(),
  message: z.string().nullable(),
});
export type DependencyStateDto = z.infer<typeof DependencyStateSchema>;

export const DependencyGraphQuery = z.object({ env: z.string().min(1).max(253) });

export const DependencyGraphResponse = z.object({
  env: z.string(),
  nodes: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      cluster: z.string(),
      env: z.string(),
      kind: z.string(),
      ready: z.enum(READY),
      /** the Ready condition's reason and message (untrusted text) */
      reason: z.string().nullable(),
      message: z.string().nullable(),
      waitingOn: z.string().optional(),
      /** steps from the apps that nothing depends on (0) to the deepest dependency */
      depth: z.number(),
    }),
  ),
  /** from the app to what it depends on */
  edges: z.array(z.object({ from: z.string(), to: z.string() })),
  /** dependency cycles: Flux never reconciles their members */
  cycles: z.array(z.array(z.string())),
  /** dependencies the console does not know (another cluster, a name that does not exist, a hidden app) */
  unknown: z.array(z.object({ from: z.string(), namespace: z.string(), name: z.string() })),
});
export type DependencyGraphResponse = z.infer<typeof DependencyGraphResponse>;
