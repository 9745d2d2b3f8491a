// Manifests per release (issue 28): what exactly a release rendered (its masked objects, kept by render hash),
// which release ran at a moment, and two releases compared field by field.
//   GET /api/apps/:app/releases/:sha/manifests             the release's stored render
//   GET /api/apps/:app/releases/at?time=<ISO>               the release live at that time
//   GET /api/apps/:app/releases/compare?from=<sha>&to=<sha>[&toApp=<app id>]   two renders compared
import { z } from 'zod';

export const ReleaseManifestsResponse = z.object({
  sha: z.string(),
  renderHash: z.string(),
  recordedAt: z.string(),
  storedBytes: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  objects: z.array(z.record(z.string(), z.unknown())),
});
export type ReleaseManifestsResponse = z.infer<typeof ReleaseManifestsResponse>;

export const ReleaseAtQuery = z.object({ time: z.iso.datetime({ offset: true }) });
export const ReleaseAtResponse = z.object({
  time: z.string(),
  /** null: no release of this app was applied before that time (as far as the evidence reaches) */
  release: z.object({ sha: z.string(), appliedAt: z.string(), renderHash: z.string().nullable() }).nullable(),
  /** the release applied before it (another commit), for "compare with the release before"; null: none recorded */
  previous: z.object({ sha: z.string(), appliedAt: z.string() }).nullable(),
});
export type ReleaseAtResponse = z.infer<typeof ReleaseAtResponse>;

export const CompareQuery = z.object({
  from: z.string().regex(/^[0-9a-f]{7,64}$/),
  to: z.string().regex(/^[0-9a-f]{7,64}$/),
  /** the same app in another environment (its id); default this app */
  toApp: z.string().min(3).max(400).optional(),
});
const Ref = z.object({ apiVersion: z.string(), kind: z.string(), namespace: z.string().optional(), name: z.string() });
export const CompareResponse = z.object({
  from: z.object({ app: z.string(), sha: z.string(), renderHash: z.string() }),
  to: z.object({ app: z.string(), sha: z.string(), renderHash: z.string() }),
  added: z.array(Ref),
  removed: z.array(Ref),
  changed: z.array(
    Ref.extend({
      fields: z.array(z.object({ path: z.string(), from: z.unknown().optional(), to: z.unknown().optional() })),
    }),
  ),
  unchanged: z.number().int().nonnegative(),
});
export type CompareResponse = z.infer<typeof CompareResponse>;
