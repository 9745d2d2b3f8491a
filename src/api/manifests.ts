// Manifests per release (issue 28): what exactly a release rendered (its masked objects, kept by render hash),
// which release ran at a moment, and two releases compared field by field.
//   GET /api/apps/:app/releases/:sha/manifests             the release's stored render
//   GET /api/apps/:app/releases/at?time=<ISO>               the release live at that time
//   GET /api/apps/:app/releases/compare?from=<sha>&to=<sha>[&toApp=<app id>]   two renders compared (toApp: the
//       same app in another environment, its objects matched by kind, name and namespace relative to each target)
import { z } from 'zod';

export const ReleaseManifestsResponse = z.object({
  sha: z.string(),
  renderHash: z.string(),
  recordedAt: z.string(),
  storedBytes: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  objects: z.array(z.record(z.string(), z.unknown())),
  /**
   * objects left out for this reader (issue 40): in an environment they may not read (by their namespace's
   * mapping), or in impersonation mode of a kind or namespace their Kubernetes RBAC does not let them get; how
   * many, and why in words. `renderHash` is of the whole render.
   */
  hidden: z.object({ objects: z.number().int().positive(), reasons: z.array(z.string()) }).optional(),
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
const Side = z.object({
  app: z.string(),
  sha: z.string(),
  renderHash: z.string(),
  /**
   * two apps compared (toApp): the namespace its render targets (where most of its objects are), matched as one
   * with the other app's (domain/render-compare.ts); null: not determined, every object keeps its own namespace.
   * Absent when one app's releases are compared.
   */
  targetNamespace: z.string().nullable().optional(),
});
export const CompareResponse = z.object({
  from: Side,
  to: Side,
  added: z.array(Ref),
  removed: z.array(Ref),
  changed: z.array(
    Ref.extend({
      /** matched across environments: the from side's namespace, where it differs */
      fromNamespace: z.string().optional(),
      /** a kustomize-generated name matched by its stem: the from side's name, where it differs */
      fromName: z.string().optional(),
      fields: z.array(z.object({ path: z.string(), from: z.unknown().optional(), to: z.unknown().optional() })),
    }),
  ),
  unchanged: z.number().int().nonnegative(),
});
export type CompareResponse = z.infer<typeof CompareResponse>;
