// A Secret Git holds encrypted with SOPS (issue 26, part 2), in the diff: the console holds no key, so it never
// sees Git's values. What it can compare it does: the keys (Git's, from the encrypted document, against the live
// Secret's) and everything but the values (metadata, type), by a server-side dry-run of Git's Secret whose values
// are the live ones (a key Git adds gets an empty value): so the dry-run validates the object as the controller
// would apply it, and no value can show as a difference it is not.
import { sopsMetaOf, type SecretInGit, type SecretKeyInGit, type SopsMeta } from '../../domain/secrets-in-git.ts';
import type { Obj } from './render.ts';

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export const isCoreSecret = (o: Obj) => o.kind === 'Secret' && String(o.apiVersion ?? '') === 'v1';

/** Git's encrypted Secret as the controller would apply it, with the live values in place of Git's (unknown). */
export function applyableSopsSecret(desired: Obj, live: Obj | undefined): Obj {
  const { sops: _sops, stringData, data, ...rest } = desired;
  const liveData = isObj(live?.data) ? (live.data as Record<string, unknown>) : {};
  const keys = [
    ...new Set([...Object.keys(isObj(data) ? data : {}), ...Object.keys(isObj(stringData) ? stringData : {})]),
  ];
  return {
    ...rest,
    data: Object.fromEntries(keys.map((k) => [k, typeof liveData[k] === 'string' ? liveData[k] : ''])),
  };
}

export interface SecretDiffInfo {
  file: string | null;
  generator?: boolean;
  sops: SopsMeta | null;
  keys: Array<SecretKeyInGit & { live: 'present' | 'absent' | 'unknown' }>;
}

/** Per key: how Git holds it and whether the live Secret has it (unknown when the live Secret is unreadable). */
export function secretDiffInfo(
  desired: Obj,
  live: Obj | undefined,
  liveUnreadable: boolean,
  inGit: SecretInGit | undefined,
): SecretDiffInfo {
  const liveKeys = new Set([
    ...Object.keys(isObj(live?.data) ? (live.data as Obj) : {}),
    ...Object.keys(isObj(live?.stringData) ? (live.stringData as Obj) : {}),
  ]);
  const sops = sopsMetaOf(desired) ?? inGit?.sops ?? null;
  const keys =
    inGit?.keys ??
    [
      ...Object.keys(isObj(desired.data) ? desired.data : {}),
      ...Object.keys(isObj(desired.stringData) ? desired.stringData : {}),
    ].map((key) => ({ key, git: (sops ? 'encrypted' : 'plaintext') as SecretKeyInGit['git'] }));
  return {
    file: inGit?.file ?? null,
    ...(inGit?.generator ? { generator: true } : {}),
    sops,
    keys: keys.map((k) => ({
      ...k,
      live: liveUnreadable ? ('unknown' as const) : liveKeys.has(k.key) ? ('present' as const) : ('absent' as const),
    })),
  };
}

/** The render's record of this Secret in Git (same name and namespace). */
export function secretInGitFor(list: SecretInGit[] | undefined, desired: Obj): SecretInGit | undefined {
  const md = (desired.metadata ?? {}) as { name?: string; namespace?: string };
  return list?.find((s) => s.name === md.name && (s.namespace ?? null) === (md.namespace ?? null));
}
