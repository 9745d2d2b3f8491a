// Secrets as Git holds them (issue 26, part 2): encrypted with SOPS (its metadata says for whom, and whether a MAC
// guards the file) or committed in plaintext (a finding that names the file and the key, never the value).
// Pure: the tree walk is server/diff/secrets-in-git.ts.

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

export interface SopsMeta {
  /** age recipients (public keys) */
  age: string[];
  /** how many keys of the other kinds the data key is encrypted for */
  pgp: number;
  kms: number;
  gcpKms: number;
  azureKv: number;
  hcVault: number;
  /** a MAC over the file's values is present (sops refuses a file whose MAC does not match) */
  mac: boolean;
  version?: string;
  encryptedRegex?: string;
  lastModified?: string;
}

/** A value sops encrypted: `ENC[AES256_GCM,data:…,iv:…,tag:…,type:str]`. */
export const isSopsValue = (v: unknown): boolean => typeof v === 'string' && /^ENC\[[A-Z0-9_]+,data:/.test(v);

/** The SOPS metadata of a document (its top-level `sops` key), or undefined when it has none. */
export function sopsMetaOf(doc: Obj): SopsMeta | undefined {
  if (!doc.sops || typeof doc.sops !== 'object') return undefined;
  const s = asObj(doc.sops);
  const n = (k: string) => (Array.isArray(s[k]) ? (s[k] as unknown[]).length : 0);
  const age = Array.isArray(s.age)
    ? (s.age as unknown[]).map((a) => str(asObj(a).recipient)).filter((x): x is string => !!x)
    : [];
  return {
    age,
    pgp: n('pgp'),
    kms: n('kms'),
    gcpKms: n('gcp_kms'),
    azureKv: n('azure_kv'),
    hcVault: n('hc_vault'),
    mac: isSopsValue(s.mac),
    ...(str(s.version) ? { version: str(s.version) } : {}),
    ...(str(s.encrypted_regex) ? { encryptedRegex: str(s.encrypted_regex) } : {}),
    ...(str(s.lastmodified) ? { lastModified: str(s.lastmodified) } : {}),
  };
}

export interface SecretKeyInGit {
  key: string;
  /** how Git holds the value: sops-encrypted, or readable by anyone who can read the repository */
  git: 'encrypted' | 'plaintext';
}

/** The keys of a Secret document (data and stringData) and how each value is held in Git. */
export function secretKeysInGit(doc: Obj): SecretKeyInGit[] {
  const out = new Map<string, SecretKeyInGit>();
  for (const field of ['data', 'stringData'])
    for (const [key, v] of Object.entries(asObj(doc[field])))
      out.set(key, { key, git: isSopsValue(v) ? 'encrypted' : 'plaintext' });
  return [...out.values()].sort((a, b) => a.key.localeCompare(b.key));
}

export interface SecretInGit {
  name: string;
  namespace: string | null;
  /** the file in the repository (relative to its root), or null when it is not found there */
  file: string | null;
  /** a kustomize secretGenerator (its rendered name has a hash suffix): its literals and files are plaintext */
  generator?: boolean;
  keys: SecretKeyInGit[];
  sops: SopsMeta | null;
}

/** One line for people: "encrypted in Git (SOPS 3.13.3, age recipient age1…q4l6pz, MAC present)". */
export function describeSops(m: SopsMeta): string {
  const short = (r: string) => (r.length > 20 ? `${r.slice(0, 8)}…${r.slice(-6)}` : r);
  const to = [
    m.age.length ? `age recipient${m.age.length > 1 ? 's' : ''} ${m.age.map(short).join(', ')}` : '',
    ...(
      [
        ['PGP', m.pgp],
        ['AWS KMS', m.kms],
        ['GCP KMS', m.gcpKms],
        ['Azure Key Vault', m.azureKv],
        ['Vault', m.hcVault],
      ] as const
    )
      .filter(([, c]) => c > 0)
      .map(([k, c]) => `${c} ${k} key${c > 1 ? 's' : ''}`),
  ].filter(Boolean);
  return `encrypted in Git (SOPS${m.version ? ` ${m.version}` : ''}${to.length ? `, ${to.join(', ')}` : ''}, ${
    m.mac ? 'MAC present' : 'no MAC'
  })`;
}

/** The plaintext findings of a render's Secrets: each file and key whose value anyone with the repo can read. */
export function plaintextInGit(secrets: SecretInGit[]): Array<{ file: string | null; secret: string; keys: string[] }> {
  return secrets
    .map((s) => ({
      file: s.file,
      secret: `${s.namespace ? `${s.namespace}/` : ''}${s.name}`,
      keys: s.keys.filter((k) => k.git === 'plaintext').map((k) => k.key),
    }))
    .filter((f) => f.keys.length > 0);
}
