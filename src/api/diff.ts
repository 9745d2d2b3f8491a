// The Git-versus-live diff of an app, and the comparison of an app across environments.
import { z } from 'zod';
import { CHANGE_CLASSES } from '../domain/field-diff.ts';
import { FieldOwnerSchema, ObjectRefSchema } from './common.ts';
import { HookRunSchema } from './tree.ts';

// ---- Git-versus-live diff

/** SOPS metadata of a document in Git (who can decrypt it; whether a MAC guards it) */
export const SopsMetaSchema = z.object({
  age: z.array(z.string()),
  pgp: z.number(),
  kms: z.number(),
  gcpKms: z.number(),
  azureKv: z.number(),
  hcVault: z.number(),
  mac: z.boolean(),
  version: z.string().optional(),
  encryptedRegex: z.string().optional(),
  lastModified: z.string().optional(),
});
const SecretKeyInGitSchema = z.object({ key: z.string(), git: z.enum(['encrypted', 'plaintext']) });
/** a rendered Secret and where Git holds it (file, keys, SOPS or plaintext): never a value */
export const SecretInGitSchema = z.object({
  name: z.string(),
  namespace: z.string().nullable(),
  file: z.string().nullable(),
  generator: z.boolean().optional(),
  keys: z.array(SecretKeyInGitSchema),
  sops: SopsMetaSchema.nullable(),
});
export type SecretInGitDto = z.infer<typeof SecretInGitSchema>;

export const FieldChangeSchema = z.object({
  path: z.string(),
  desired: z.unknown().optional(),
  predicted: z.unknown().optional(),
  live: z.unknown().optional(),
  owners: z.array(FieldOwnerSchema),
  class: z.enum(CHANGE_CLASSES),
});
export type FieldChangeDto = z.infer<typeof FieldChangeSchema>;
export const ObjectDiffSchema = z.object({
  ref: ObjectRefSchema,
  /** `hook`: an Argo CD hook (PreSync, PostSync, …), which Argo CD compares none of: neither unchanged nor a drift */
  status: z.enum(['changed', 'missing', 'extraneous', 'unchanged', 'unknown', 'hook']),
  /** `not-compared`: a hook's row (no dry-run, no field diff) */
  mode: z.enum(['server-dry-run', 'normalized', 'apply-noop', 'not-compared']),
  note: z.string().optional(),
  changes: z.array(FieldChangeSchema),
  desiredYaml: z.string().optional(),
  liveYaml: z.string().optional(),
  predictedYaml: z.string().optional(),
  /** with `status: 'hook'`: its type and last run (the phase and message Argo CD recorded, or the live object's) */
  hook: HookRunSchema.optional(),
  secret: z
    .object({
      file: z.string().nullable(),
      generator: z.boolean().optional(),
      sops: SopsMetaSchema.nullable(),
      keys: z.array(SecretKeyInGitSchema.extend({ live: z.enum(['present', 'absent', 'unknown']) })),
    })
    .optional(),
});
export type ObjectDiffDto = z.infer<typeof ObjectDiffSchema>;
export const DiffResponse = z.object({
  appId: z.string(),
  generatedAt: z.string(),
  state: z.enum(['ok', 'unknown']),
  error: z.string().optional(),
  render: z
    .object({
      renderer: z.string(),
      revision: z.string(),
      artifactDigest: z.string().optional(),
      renderHash: z.string(),
      secretsInGit: z.array(SecretInGitSchema).optional(),
    })
    .optional(),
  counts: z.record(z.string(), z.number()),
  summary: z.string(),
  objects: z.array(ObjectDiffSchema),
  /** what a prune preview would plan from the extraneous rows (the same rules: the diff and the plan agree) */
  prune: z
    .object({
      state: z.enum(['unknown', 'nothing', 'ready', 'needs-override']),
      reasons: z.array(z.string()),
      deletions: z.number(),
      protected: z.number(),
    })
    .optional(),
  /** the render has no objects while the app tracks some (the summary says what that would mean) */
  emptyRender: z.boolean().optional(),
  /**
   * rows left out because the console's mapping puts their namespace in an environment the reader may not read
   * (a rendered object, or a live one carrying the app's label): counted, never dropped silently; `counts`, the
   * summary and the ownership conflicts are of the rows shown
   */
  hiddenByEnvironment: z.number().int().positive().optional(),
  ownership: z.array(
    z.object({
      manager: z.string(),
      fields: z.number(),
      objects: z.number(),
      conflicts: z.array(z.object({ object: z.string(), path: z.string(), with: z.array(z.string()) })),
    }),
  ),
  /**
   * What the BFF did for this diff: renders run (0 when the render for this revision was cached), server-side
   * dry-runs sent (only objects whose desired or live state changed), object results reused, and whether the
   * request shared a concurrent identical one.
   */
  work: z
    .object({
      renders: z.number().int().nonnegative(),
      dryRuns: z.number().int().nonnegative(),
      cachedObjects: z.number().int().nonnegative(),
      coalesced: z.boolean(),
    })
    .optional(),
});
export type DiffResponse = z.infer<typeof DiffResponse>;

export const EnvCompareResponse = z.object({
  envs: z.array(
    z.object({
      env: z.string(),
      appId: z.string(),
      cluster: z.string(),
      revision: z.string().optional(),
      renderHash: z.string().optional(),
      error: z.string().optional(),
    }),
  ),
  images: z.array(
    z.object({
      object: z.string(),
      container: z.string(),
      byEnv: z.record(z.string(), z.object({ ref: z.string(), pinned: z.enum(['digest', 'tag']) })),
    }),
  ),
  fields: z.array(z.object({ object: z.string(), path: z.string(), byEnv: z.record(z.string(), z.unknown()) })),
  /** how many of the app's environments the reader may not read (left out, never named) */
  hiddenEnvironments: z.number().int().nonnegative().optional(),
});
export type EnvCompareResponse = z.infer<typeof EnvCompareResponse>;
