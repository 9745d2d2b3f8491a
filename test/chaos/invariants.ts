// The invariants every chaos cell checks after recovery, from outside the acting process: the evidence as another
// replica serves it, exported and verified offline with the console's public key (what an auditor does).
import { verifyExportText } from '../../src/server/evidence/offline-verify.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, download } from '../support/auth.ts';
import type { Replica } from './types.ts';

export interface Record {
  seq: number;
  type: string;
  actor: string;
  app: string | null;
  data: { [k: string]: unknown };
}

const OUTCOMES = new Set(['action.completed', 'action.failed', 'action.interrupted', 'action.voided']);

/** The whole chain as `r` exports it, and the offline verifier's verdict on it. */
export async function exportChain(r: Replica): Promise<{ records: Record[]; verdict: string; ok: boolean }> {
  // the reader's own key signs the export's trailer (each replica has its own; the chain itself is keyless)
  const key = await download(r.admin, r.base, '/api/evidence/public-key');
  const publicKey = key.status === 200 ? key.text : undefined;
  const res = await download(r.admin, r.base, '/api/evidence/export?format=jsonl');
  if (res.status !== 200) return { records: [], verdict: `export answered ${res.status}`, ok: false };
  const result = verifyExportText([res.text], publicKey ? { publicKey } : {});
  const records: Record[] = [];
  for (const line of res.text.split('\n')) {
    if (!line.trim()) continue;
    const o = JSON.parse(line) as Partial<Record> & { trailer?: unknown };
    if (typeof o.seq === 'number' && typeof o.type === 'string') records.push(o as Record);
  }
  const verdict = result.ok
    ? `verified offline: ${result.count} events`
    : `BROKEN: ${result.problems[0]?.reason ?? 'unknown'}`;
  return { records, verdict, ok: result.ok };
}

/** The highest seq the chain holds now (the cell's mark: what came after is the cell's). */
export async function headSeq(r: Replica): Promise<number> {
  const res = await as(r.admin, r.base, '/api/evidence?limit=1');
  const e = (res.body?.events as Array<{ seq: number }> | undefined)?.[0];
  return e?.seq ?? 0;
}

/** The intents of `type` after `mark`, and each one's outcomes. */
export function intentsAndOutcomes(
  records: Record[],
  type: string,
  mark: number,
): { intents: Record[]; outcomes: Map<number, Record[]>; orphans: Record[] } {
  const intents = records.filter((r) => r.seq > mark && r.type === type);
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  const outcomes = new Map<number, Record[]>(intents.map((i) => [i.seq, []]));
  const orphans: Record[] = [];
  for (const r of records) {
    if (r.seq <= mark || !OUTCOMES.has(r.type)) continue;
    const of = Number(r.data.intentSeq);
    const list = outcomes.get(of);
    if (list) list.push(r);
    else if (!bySeq.has(of)) orphans.push(r);
  }
  return { intents, outcomes, orphans };
}

/**
 * Waits (≤ `timeoutMs`) until every intent of `type` after `mark` has an outcome, then checks: exactly one outcome
 * each, no outcome naming an intent the chain lacks, and the chain verifies offline. Returns what broke and the
 * intents' seq numbers with their outcomes (`12→13 completed`).
 */
export async function evidenceInvariants(
  r: Replica,
  type: string,
  mark: number,
  timeoutMs = 40_000,
): Promise<{ broken: string[]; intents: number[]; seqs: string; records: Record[] }> {
  let last = await exportChain(r);
  await waitFor(
    'every intent has its outcome',
    async () => {
      last = await exportChain(r);
      const { outcomes } = intentsAndOutcomes(last.records, type, mark);
      return [...outcomes.values()].every((o) => o.length > 0);
    },
    { timeoutMs, intervalMs: 1000 },
  ).catch(() => undefined);
  // a few sweeps more: a second outcome would show now
  await new Promise((res) => setTimeout(res, 2000));
  last = await exportChain(r);
  const { intents, outcomes, orphans } = intentsAndOutcomes(last.records, type, mark);
  const broken: string[] = [];
  for (const i of intents) {
    const o = outcomes.get(i.seq) ?? [];
    if (o.length === 0) broken.push(`intent ${i.seq} has no outcome`);
    if (o.length > 1) broken.push(`intent ${i.seq} has ${o.length} outcomes (${o.map((x) => x.seq).join(', ')})`);
  }
  for (const o of orphans) broken.push(`outcome ${o.seq} names intent ${String(o.data.intentSeq)}, not in the chain`);
  if (!last.ok) broken.push(`the export does not verify offline: ${last.verdict}`);
  const seqs = intents
    .map((i) => {
      const o = outcomes.get(i.seq) ?? [];
      return `${i.seq}→${o.map((x) => `${x.seq} ${x.type.replace('action.', '')}`).join('+') || 'none'}`;
    })
    .join(', ');
  return { broken, intents: intents.map((i) => i.seq), seqs: seqs || 'no intent', records: last.records };
}

/** Until `r` is ready again and its evidence store not failing (the console recovered without a restart). */
export async function recovered(r: Replica, timeoutMs = 60_000): Promise<string | undefined> {
  let said = '';
  return waitFor(
    'the console recovered',
    async () => {
      const res = await fetch(`${r.base}/readyz`);
      const body = (await res.json()) as { ready?: boolean; evidence?: { failing?: boolean; pending?: number } };
      said = `readyz ${res.status}, evidence failing=${body.evidence?.failing} pending=${body.evidence?.pending}`;
      return res.status === 200 && body.evidence?.failing === false && body.evidence?.pending === 0;
    },
    { timeoutMs, intervalMs: 500 },
  ).then(
    () => undefined,
    () => `${r.name} did not recover without a restart within ${timeoutMs / 1000} s (${said})`,
  );
}
