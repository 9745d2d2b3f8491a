// Evidence export: JSONL (one stored event per line, exactly as stored: what `cli evidence verify` checks) or
// CSV (RFC 4180, data as JSON text, cells neutralised against formula injection: export-csv.ts). Streamed from
// batched keyset queries in ascending seq, bounded by the head seen when the export started (a snapshot):
// never the whole result in memory. Every export ends with a signed trailer (export-trailer.ts) that says
// which events the file holds and what was filtered, so a verifier can tell a cut file from a whole one.
import type { KeyObject } from 'node:crypto';
import { GENESIS_HASH, type EvidenceEvent } from '../../domain/evidence.ts';
import { csvField } from './export-csv.ts';
import { RecordsDigest, signTrailer, type EvidenceExportFilter, type EvidenceExportTrailer } from './export-trailer.ts';
import type { EvidenceQuery, EvidenceStore, Row } from './store.ts';

export { csvField };

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

export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;

export function csvLine(r: ExportRecord): string {
  return `${CSV_COLUMNS.map((c) => csvField(r[c])).join(',')}\r\n`;
}

/** A store that can hand out its rows without parsing `data` (SQLite): the export's fast path. */
interface RowSource {
  listRows(q: EvidenceQuery): Row[];
}
const hasRows = (s: object): s is RowSource => typeof (s as Partial<RowSource>).listRows === 'function';

/** the filters of an export (its batches and snapshot bound are its own) */
export type ExportQuery = Omit<EvidenceQuery, 'afterSeq' | 'beforeSeq' | 'limit' | 'order'>;

export interface ExportOptions {
  format: ExportFormat;
  /** which events the reader may see (the per-grant filter) and the grants that say so; all when absent */
  visible?: { grants: string[]; test(e: { cluster: string | null; env: string | null }): boolean };
  /** the checkpoint key that signs the trailer (none: the trailer is unsigned) */
  key?: { privateKey: KeyObject; publicKey: KeyObject } | undefined;
  now?: () => Date;
  batchSize?: number;
}

/** The trailer as the last line of a JSONL export. */
export const jsonlTrailer = (t: EvidenceExportTrailer): string => `${JSON.stringify(t)}\n`;

/** The trailer as the last CSV row: `trailer` in the seq column, the trailer's JSON in the data column. */
export const csvTrailer = (t: EvidenceExportTrailer): string =>
  `${CSV_COLUMNS.map((c) => (c === 'seq' ? 'trailer' : c === 'data' ? csvField(JSON.stringify(t)) : '')).join(',')}\r\n`;

/** What the trailer says was left out: the query's filters and the reader's grants; null when nothing was. */
export function exportFilter(query: ExportQuery, grants: string[] | undefined): EvidenceExportFilter | null {
  const q = Object.fromEntries(
    Object.entries(query).filter(([, v]) => v !== undefined && v !== '' && !(Array.isArray(v) && !v.length)),
  ) as Record<string, string | string[]>;
  const hasQuery = Object.keys(q).length > 0;
  if (!hasQuery && !grants) return null;
  return { ...(hasQuery ? { query: q } : {}), ...(grants ? { permissions: grants } : {}) };
}

/** The export as text chunks (one per batch), ascending seq, up to the head when it started, then the trailer. */
export async function* exportChunks(
  store: EvidenceStore,
  filter: ExportQuery,
  opts: ExportOptions,
): AsyncGenerator<string> {
  const batchSize = opts.batchSize ?? 1000;
  const line = opts.format === 'csv' ? csvLine : jsonlLine;
  const [head] = await store.list({ limit: 1 });
  if (opts.format === 'csv') yield CSV_HEADER;
  const digest = new RecordsDigest();
  let first: ExportRecord | undefined;
  let last: ExportRecord | undefined;
  let count = 0;
  let after = 0;
  while (head) {
    const q: EvidenceQuery = { ...filter, afterSeq: after, beforeSeq: head.seq + 1, order: 'asc', limit: batchSize };
    const batch = hasRows(store) ? store.listRows(q).map(fromRow) : (await store.list(q)).map(fromEvent);
    let out = '';
    for (const r of batch) {
      if (opts.visible && !opts.visible.test(r)) continue;
      out += line(r);
      digest.add(r.hash);
      first ??= r;
      last = r;
      count++;
    }
    if (out) yield out;
    const end = batch.at(-1);
    if (batch.length < batchSize || !end) break;
    after = end.seq;
  }
  const trailer = signTrailer(
    {
      trailer: 'gitops-console evidence export v1',
      format: opts.format,
      time: (opts.now?.() ?? new Date()).toISOString(),
      filter: exportFilter(filter, opts.visible?.grants),
      firstSeq: first?.seq ?? null,
      lastSeq: last?.seq ?? null,
      count,
      lastHash: last?.hash ?? null,
      headSeq: head?.seq ?? 0,
      headHash: head?.hash ?? GENESIS_HASH,
      digest: digest.hex(),
    },
    opts.key,
  );
  yield opts.format === 'csv' ? csvTrailer(trailer) : jsonlTrailer(trailer);
}
