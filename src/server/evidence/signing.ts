// The checkpoint signing key: Ed25519, kept outside the database (a file in the data dir, 0600, or the file
// CONSOLE_EVIDENCE_SIGNING_KEY_FILE names), so whoever can rewrite the store cannot re-sign its head.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalJson } from '../../domain/evidence.ts';

export interface Checkpoint {
  seq: number;
  hash: string;
  time: string;
  /** Ed25519 over checkpointMessage(), base64 */
  signature: string;
}

export interface SigningKey {
  path: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** SPKI PEM: what /api/evidence/public-key serves and `cli evidence public-key` prints */
  publicKeyPem: string;
}

/** The key file: CONSOLE_EVIDENCE_SIGNING_KEY_FILE, else `checkpoint.key` in the data dir. */
export function signingKeyPath(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.CONSOLE_EVIDENCE_SIGNING_KEY_FILE || join(dataDir, 'checkpoint.key');
}

const loaded = new Map<string, SigningKey>();

/** Reads the key file, creating a new key pair (0600) when there is none. */
export function loadSigningKey(path: string): SigningKey {
  const cached = loaded.get(path);
  if (cached) return cached;
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ed25519');
    pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    try {
      // 'wx': another process that created it first wins; we read theirs
      writeFileSync(path, pem, { mode: 0o600, flag: 'wx' });
    } catch (w) {
      if ((w as NodeJS.ErrnoException).code !== 'EEXIST') throw w;
      pem = readFileSync(path, 'utf8');
    }
    chmodSync(path, 0o600);
  }
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${path} is not an Ed25519 private key`);
  const publicKey = createPublicKey(privateKey);
  const key = {
    path,
    privateKey,
    publicKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
  loaded.set(path, key);
  return key;
}

/** What is signed: a fixed prefix (never valid for anything else) and the canonical JSON of seq, hash, time. */
export function checkpointMessage(c: { seq: number; hash: string; time: string }): Buffer {
  return Buffer.from(
    `gitops-console evidence checkpoint v1\n${canonicalJson({ seq: c.seq, hash: c.hash, time: c.time })}`,
  );
}

export function signCheckpoint(head: { seq: number; hash: string }, time: string, privateKey: KeyObject): Checkpoint {
  const c = { seq: head.seq, hash: head.hash, time };
  return { ...c, signature: sign(null, checkpointMessage(c), privateKey).toString('base64') };
}

export function checkpointSignatureOk(c: Checkpoint, publicKey: KeyObject | string): boolean {
  try {
    const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
    return verify(null, checkpointMessage(c), key, Buffer.from(c.signature, 'base64'));
  } catch {
    return false;
  }
}

export type CheckpointProblem = { checkpoint: Checkpoint; reason: string };

/**
 * Checks signed checkpoints against a chain already verified up to `count` events. `hashAt(seq)` gives the
 * hash the chain has at a checkpoint's seq (undefined: not known, e.g. not in a filtered export). Returns the
 * first checkpoint (by seq) that no longer matches, or how many matched and how many could not be checked.
 */
export function checkCheckpoints(
  checkpoints: readonly Checkpoint[],
  hashAt: (seq: number) => string | undefined,
  opts: { publicKey?: KeyObject | string | undefined; lastSeq: number; complete: boolean },
): { ok: true; checked: number; unchecked: Checkpoint[] } | ({ ok: false } & CheckpointProblem) {
  const sorted = [...checkpoints].sort((a, b) => a.seq - b.seq);
  let checked = 0;
  const unchecked: Checkpoint[] = [];
  for (const c of sorted) {
    if (opts.publicKey && !checkpointSignatureOk(c, opts.publicKey))
      return {
        ok: false,
        checkpoint: c,
        reason: `the checkpoint of event ${c.seq} (${c.time}) has no valid signature: checkpoints were altered or signed with another key`,
      };
    const h = hashAt(c.seq);
    if (h === undefined) {
      if (opts.complete && c.seq > opts.lastSeq)
        return {
          ok: false,
          checkpoint: c,
          reason: `the checkpoint of ${c.time} names event ${c.seq} but the chain ends at event ${opts.lastSeq}: events were removed`,
        };
      unchecked.push(c);
      continue;
    }
    if (h !== c.hash)
      return {
        ok: false,
        checkpoint: c,
        reason: `event ${c.seq} no longer has the hash signed in the checkpoint of ${c.time}: the chain was rewritten at or before event ${c.seq}`,
      };
    checked++;
  }
  return { ok: true, checked, unchecked };
}
