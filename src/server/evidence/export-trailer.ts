// The signed trailer that ends every export: which events the file holds (first, last, count, the hash of the
// last one and a digest of all their hashes), the chain head when the export started, the filter (null for a
// full export) and the checkpoint key's id, signed with that key. Removing events from either end of a file,
// or from the middle of a filtered one, no longer matches it; altering it breaks its signature.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { EXPORT_TRAILER_V1, type EvidenceExportFilter, type EvidenceExportTrailer } from '../../api/schemas.ts';
import { canonicalJson } from '../../domain/evidence.ts';

export { EXPORT_TRAILER_V1 };
export type { EvidenceExportFilter, EvidenceExportTrailer };

const toKey = (k: KeyObject | string): KeyObject => (typeof k === 'string' ? createPublicKey(k) : k);

/** A public key's id: `sha256:` and the hex SHA-256 of its SPKI DER (what `openssl pkey -pubin -outform DER | sha256sum` gives). */
export function keyIdOf(publicKey: KeyObject | string): string {
  const der = toKey(publicKey).export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

/** What is signed: a fixed prefix (never valid for a checkpoint or anything else) and every field but the signature. */
export function trailerMessage(t: Omit<EvidenceExportTrailer, 'signature'> & { signature?: unknown }): Buffer {
  const { signature: _signature, ...fields } = t;
  return Buffer.from(`gitops-console evidence export trailer v1\n${canonicalJson(fields)}`);
}

export function signTrailer(
  t: Omit<EvidenceExportTrailer, 'keyId' | 'signature'>,
  key: { privateKey: KeyObject; publicKey: KeyObject } | undefined,
): EvidenceExportTrailer {
  if (!key) return { ...t, keyId: null, signature: null };
  const unsigned = { ...t, keyId: keyIdOf(key.publicKey) };
  return { ...unsigned, signature: sign(null, trailerMessage(unsigned), key.privateKey).toString('base64') };
}

export function trailerSignatureOk(t: EvidenceExportTrailer, publicKey: KeyObject | string): boolean {
  if (!t.signature) return false;
  try {
    return verify(null, trailerMessage(t), toKey(publicKey), Buffer.from(t.signature, 'base64'));
  } catch {
    return false;
  }
}

/** The trailer's `digest`: SHA-256 over each event's hash followed by "\n", in file order. */
export class RecordsDigest {
  private readonly h = createHash('sha256');
  add(hash: string): void {
    this.h.update(`${hash}\n`);
  }
  hex(): string {
    return this.h.digest('hex');
  }
}

/** "env=dev, type=a,b; outside the reader's grants left out (reviewer@nonprod/dev)" */
export function describeFilter(f: EvidenceExportFilter | null): string {
  if (!f) return 'none (a full export)';
  const parts: string[] = [];
  const q = Object.entries(f.query ?? {}).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`);
  if (q.length) parts.push(q.join(', '));
  if (f.permissions) parts.push(`events outside the reader's grants left out (${f.permissions.join(', ')})`);
  return parts.join('; ') || 'filtered';
}
