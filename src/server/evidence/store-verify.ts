// verify() of both backends: the chain (first broken link), then every signed checkpoint — its signature and
// that the event at its seq still has the hash it signed. A store whose events and hashes were all rewritten
// consistently passes the chain but not the checkpoints (the key is not in the database).
import { ChainVerifier, type VerifyResult } from '../../domain/evidence.ts';
import { checkCheckpoints, type Checkpoint } from './signing.ts';
import { rowToEvent, sha256, verifyRows, type Row } from './store.ts';

export function verifyStore(
  rows: Iterable<Row>,
  head: { seq: number; hash: string } | undefined,
  checkpoints: readonly Checkpoint[],
  publicKey?: string,
): VerifyResult {
  const wanted = new Set(checkpoints.map((c) => c.seq));
  const seen = new Map<number, string>();
  function* watched(): Generator<Row> {
    for (const r of rows) {
      if (wanted.size && wanted.has(Number(r.seq))) seen.set(Number(r.seq), r.hash);
      yield r;
    }
  }
  return withCheckpoints(verifyRows(watched(), head), seen, checkpoints, publicKey);
}

/**
 * The same over pages of rows read one after the other (PostgreSQL: keyset pages in one snapshot): each page is
 * checked and dropped, so memory is one page and the checkpoints' hashes, whatever the chain's length.
 */
export async function verifyStorePages(
  pages: AsyncIterable<readonly Row[]>,
  head: { seq: number; hash: string } | undefined,
  checkpoints: readonly Checkpoint[],
  publicKey?: string,
): Promise<VerifyResult> {
  const wanted = new Set(checkpoints.map((c) => c.seq));
  const seen = new Map<number, string>();
  const v = new ChainVerifier(sha256);
  for await (const page of pages)
    for (const r of page) {
      if (wanted.size && wanted.has(Number(r.seq))) seen.set(Number(r.seq), r.hash);
      const broken = v.push(rowToEvent(r));
      if (broken) return broken;
    }
  return withCheckpoints(v.finish(head), seen, checkpoints, publicKey);
}

function withCheckpoints(
  chain: VerifyResult,
  seen: ReadonlyMap<number, string>,
  checkpoints: readonly Checkpoint[],
  publicKey: string | undefined,
): VerifyResult {
  if (!chain.ok || checkpoints.length === 0) return chain;
  const cp = checkCheckpoints(checkpoints, (seq) => seen.get(seq), {
    publicKey,
    lastSeq: chain.count,
    complete: true,
  });
  if (!cp.ok)
    return {
      ok: false,
      count: chain.count,
      brokenAt: cp.checkpoint.seq,
      reason: cp.reason,
      checkpoint: { seq: cp.checkpoint.seq, time: cp.checkpoint.time },
    };
  return { ...chain, checkpoints: cp.checked };
}
