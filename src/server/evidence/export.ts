// Evidence export: JSONL (one stored event per line, exactly as stored: what `cli evidence verify` checks) or
// CSV (RFC 4180, data as JSON text). Streamed from batched keyset queries in ascending seq, bounded by the head
// seen when the export started (a snapshot): never the whole result in memory.
import type { EvidenceEvent } from '../../domain/evidence.ts';
import type { EvidenceQuery, EvidenceStore, Row } from './store.ts';

export type ExportFormat = 'jsonl' | 'csv';

/** One event as exported; `data` is its JSON text (from the store as is, when the store gives rows). */
export interface ExportRecord {
  seq: number;
  time: string;
  type: string;
  actor: string;
  app: string | null;
  cluster: string | null;
  env: string | null;
  data: string;
  prevHash: string;
  hash: string;
}

export const CSV_COLUMNS = [
  'seq',
  'time',
  'type',
  'actor',
  'app',
  'cluster',
  'env',
  'data',
  'prevHash',
  'hash',
] as const;

export const fromEvent = (e: EvidenceEvent): ExportRecord => ({
  seq: e.seq,
  time: e.time,
  type: e.type,
  actor: e.actor,
  app: e.app ?? null,
  cluster: e.cluster ?? null,
  env: e.env ?? null,
  data: JSON.stringify(e.data),
  prevHash: e.prevHash,
  hash: e.hash,
});

const fromRow = (r: Row): ExportRecord => ({
  seq: Number(r.seq),
  time: r.time,
  type: r.type,
  actor: r.actor,
  app: r.app,
  cluster: r.cluster,
  env: r.env,
  data: r.data,
  prevHash: r.prev_hash,
  hash: r.hash,
});

const str = JSON.stringify;

/** The event as one JSON line with the keys of EvidenceEvent (the stored data JSON embedded as is). */
export function jsonlLine(r: ExportRecord): string {
  return `{"seq":${r.seq},"time":${str(r.time)},"type":${str(r.type)},"actor":${str(r.actor)},"app":${str(r.app)},"cluster":${str(r.cluster)},"env":${str(r.env)},"data":${r.data},"prevHash":${str(r.prevHash)},"hash":${str(r.hash)}}\n`;
}

/** RFC 4180: a field with a comma, a double quote, CR or LF is quoted, its double quotes doubled; null is empty. */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;

export function csvLine(r: ExportRecord): string {
  return `${CSV_COLUMNS.map((c) => csvField(r[c])).join(',')}\r\n`;
}

/** A store that can hand out its rows without parsing `data` (SQLite): the export's fast path. */
interface RowSource {
  listRows(q: EvidenceQuery): Row[];
}
const hasRows = (s: object): s is RowSource => typeof (s as Partial<RowSource>).listRows === 'function';

export interface ExportOptions {
  format: ExportFormat;
  /** which events the reader may see (the per-grant filter); all when absent */
  visible?: (e: { cluster: string | null; env: string | null }) => boolean;
  batchSize?: number;
}

/** The export as text chunks (one per batch), ascending seq, up to the head when it started. */
export async function* exportChunks(
  store: EvidenceStore,
  filter: Omit<EvidenceQuery, 'afterSeq' | 'beforeSeq' | 'limit' | 'order'>,
  opts: ExportOptions,
): AsyncGenerator<string> {
  const batchSize = opts.batchSize ?? 1000;
  const line = opts.format === 'csv' ? csvLine : jsonlLine;
  const [head] = await store.list({ limit: 1 });
  if (opts.format === 'csv') yield CSV_HEADER;
  if (!head) return;
  let after = 0;
  for (;;) {
    const q: EvidenceQuery = { ...filter, afterSeq: after, beforeSeq: head.seq + 1, order: 'asc', limit: batchSize };
    const batch = hasRows(store) ? store.listRows(q).map(fromRow) : (await store.list(q)).map(fromEvent);
    let out = '';
    for (const r of batch) if (!opts.visible || opts.visible(r)) out += line(r);
    if (out) yield out;
    const last = batch.at(-1);
    if (batch.length < batchSize || !last) return;
    after = last.seq;
  }
}
