// SOPS in the sandbox (issue 26, part 2): Flux's documented set-up, for real. At start-up age-keygen makes one age
// key for the sandbox (run/sops/age.agekey, owner-only); the sops CLI encrypts the seed's Secrets with its public
// key before they are pushed to the forge (`infra/<env>/db-credentials.sops.yaml`, data only, MAC over the
// file); each cluster gets the private key as the Secret flux-system/sops-age (`age.agekey`), which the infra
// Kustomizations name in `spec.decryption`, so the real kustomize-controller decrypts them when it applies.
// The console never holds the key (it does not read Secrets): it sees the encrypted file in Git and the Secret's
// keys live. The plaintext values are random per sandbox and never written to the repo or to a log.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SOPS_SECRET_NAME = 'db-credentials';
export const SOPS_KEY_SECRET = 'sops-age';
export const sopsSeedPath = (env: string) => `infra/${env}/${SOPS_SECRET_NAME}.sops.yaml`;
/**
 * The encrypted files of this sandbox's seed (ciphertext and `.sops.yaml` only), kept so that every later "back to
 * the seed" (the Try-it reset, tests) writes the same files: seed.ts seedFiles() includes them.
 */
export const generatedSeedPath = (runDir: string) => join(runDir, 'sops', 'seed-files.json');

/** The seed files made at the forge's first start, written beside the key (owner-only). */
export function rememberGeneratedSeed(runDir: string, files: Record<string, string>): Record<string, string> {
  writeFileSync(generatedSeedPath(runDir), JSON.stringify(files), { mode: 0o600 });
  return files;
}

export interface AgeKey {
  file: string;
  /** the public key (age1…): the recipient sops encrypts to */
  recipient: string;
}

/** The sandbox's age key (made once per run directory with age-keygen; owner-only). */
export function ensureAgeKey(runDir: string, binDir: string): AgeKey {
  const dir = join(runDir, 'sops');
  const file = join(dir, 'age.agekey');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  if (!existsSync(file)) {
    // made aside and linked into place: a second start-up racing this one keeps the first key, never a mix
    const tmp = `${file}.${process.pid}.tmp`;
    rmSync(tmp, { force: true });
    execFileSync(join(binDir, 'age-keygen'), ['-o', tmp], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  chmodSync(file, 0o600);
  const recipient = /^# public key: (age1[0-9a-z]+)$/m.exec(readFileSync(file, 'utf8'))?.[1];
  if (!recipient) throw new Error(`sops: no public key in ${file}`);
  return { file, recipient };
}

/** The plaintext Secret of an environment (random values: the sandbox's own, never in Git as such). */
function plaintextSecret(env: string): string {
  const password = randomBytes(18).toString('base64url');
  return `apiVersion: v1
kind: Secret
metadata:
  name: ${SOPS_SECRET_NAME}
  namespace: ${env}
  labels:
    app.kubernetes.io/part-of: infra
type: Opaque
stringData:
  DB_USER: render_${env}
  DB_PASSWORD: ${password}
`;
}

/** Encrypts one YAML document with sops for the recipient (data and stringData only, as Flux's guide does). */
export function sopsEncrypt(binDir: string, recipient: string, yaml: string, name = 'secret.yaml'): string {
  const tmp = mkdtempSync(join(process.env.TMPDIR ?? '/tmp', 'sops-'));
  chmodSync(tmp, 0o700);
  try {
    const file = join(tmp, name);
    writeFileSync(file, yaml, { mode: 0o600 });
    return execFileSync(
      join(binDir, 'sops'),
      ['--encrypt', '--age', recipient, '--encrypted-regex', '^(data|stringData)$', file],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SOPS_AGE_KEY_FILE: '' } },
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** What the forge's first commit adds to the seed: `.sops.yaml` and each environment's encrypted Secret. */
export function sopsSeedFiles(binDir: string, key: AgeKey, envs = ['dev', 'staging', 'prod']): Record<string, string> {
  const files: Record<string, string> = {
    '.sops.yaml': `# SOPS rules for this repository: Secrets are encrypted for the sandbox's age key (data only)
creation_rules:
  - path_regex: .*\\.sops\\.yaml$
    encrypted_regex: ^(data|stringData)$
    age: ${key.recipient}
`,
  };
  for (const env of envs) files[sopsSeedPath(env)] = sopsEncrypt(binDir, key.recipient, plaintextSecret(env));
  return files;
}

/** The private key as Flux's documentation puts it: a Secret in flux-system with the key `age.agekey`. */
export function sopsKeySecret(key: AgeKey): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SOPS_KEY_SECRET, namespace: 'flux-system' },
    type: 'Opaque',
    data: { 'age.agekey': readFileSync(key.file).toString('base64') },
  });
}
