// The paged verify (PostgreSQL's) answers exactly what the whole-chain verify answers, for an intact chain and
// for each way a chain breaks: an edited event, a removed one, a cut tail, a re-linked one.
import { describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import { verifyStore, verifyStorePages } from './store-verify.ts';
import { link, type Row } from './store.ts';

function chain(n: number): Row[] {
  const rows: Row[] = [];
  let prev: EvidenceEvent | undefined;
  for (let i = 1; i <= n; i++) {
    const e = link(prev, {
      time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
      type: 'drift.detected',
      actor: 'console',
      app: `a${i % 3}`,
      cluster: 'nonprod',
      env: 'dev',
      data: { i },
    });
    rows.push({ ...e, data: JSON.stringify(e.data), prev_hash: e.prevHash } as unknown as Row);
    prev = e;
  }
  return rows;
}

async function* pagesOf(rows: Row[], size: number): AsyncGenerator<Row[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
  if (rows.length % size === 0) yield [];
}

const headOf = (rows: Row[]) => ({ seq: 10, hash: rows[9]?.hash ?? '' });

describe('verifyStorePages', () => {
  const cases: Record<string, (rows: Row[]) => Row[]> = {
    intact: (r) => r,
    edited: (r) => r.map((x) => (Number(x.seq) === 4 ? { ...x, actor: 'someone else' } : x)),
    removed: (r) => r.filter((x) => Number(x.seq) !== 6),
    'tail cut': (r) => r.slice(0, 8),
    relinked: (r) => r.map((x) => (Number(x.seq) === 7 ? { ...x, prev_hash: '0'.repeat(64) } : x)),
  };
  for (const [name, change] of Object.entries(cases))
    it(`${name}: the same answer as the whole-chain verify, in pages of 3`, async () => {
      const full = chain(10);
      const rows = change(full);
      const whole = verifyStore(rows, headOf(full), []);
      expect(await verifyStorePages(pagesOf(rows, 3), headOf(full), [])).toEqual(whole);
      expect(whole.ok).toBe(name === 'intact');
    });
});
