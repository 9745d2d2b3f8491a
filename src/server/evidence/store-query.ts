// The evidence list query for both dialects: filters, a text search and keyset paging by seq. Every filter
// has an index ending in seq (migrations 1 and 4), so a page walks one index backwards from the cursor and
// stops after `limit` rows instead of sorting the matches: it stays fast at a million events.
import type { Checkpoint, EvidenceQuery } from './store.ts';

export const MAX_LIST_LIMIT = 5000;

export interface BuiltQuery {
  sql: string;
  args: unknown[];
}

/** `SELECT * FROM evidence WHERE … ORDER BY seq … LIMIT …`, with `?` (SQLite) or `$n` (PostgreSQL) placeholders. */
export function buildEvidenceQuery(q: EvidenceQuery, dialect: 'sqlite' | 'postgres'): BuiltQuery {
  const where: string[] = [];
  const args: unknown[] = [];
  const p = (v: unknown): string => {
    args.push(v);
    return dialect === 'sqlite' ? '?' : `$${args.length}`;
  };
  if (q.app) where.push(`app = ${p(q.app)}`);
  if (q.cluster) where.push(`cluster = ${p(q.cluster)}`);
  if (q.env) where.push(`env = ${p(q.env)}`);
  if (q.actor) where.push(`actor = ${p(q.actor)}`);
  const types = (Array.isArray(q.type) ? q.type : q.type ? [q.type] : []).filter(Boolean);
  if (types.length === 1) where.push(`type = ${p(types[0])}`);
  else if (types.length > 1) where.push(`type IN (${types.map((t) => p(t)).join(', ')})`);
  // times are stored as ISO-8601 UTC (toISOString): text order is time order
  if (q.from) where.push(`time >= ${p(q.from)}`);
  if (q.to) where.push(`time <= ${p(q.to)}`);
  if (q.text) {
    // case-insensitive substring, no pattern characters: instr/strpos, both sides lowered by the database
    const fn = dialect === 'sqlite' ? 'instr' : 'strpos';
    const cols = ['actor', 'type', "coalesce(app, '')", 'data'];
    where.push(`(${cols.map((c) => `${fn}(lower(${c}), lower(${p(q.text)})) > 0`).join(' OR ')})`);
  }
  if (q.afterSeq !== undefined) where.push(`seq > ${p(q.afterSeq)}`);
  if (q.beforeSeq !== undefined) where.push(`seq < ${p(q.beforeSeq)}`);
  const limit = p(Math.max(1, Math.min(q.limit ?? 200, MAX_LIST_LIMIT)));
  const order = q.order === 'asc' ? 'ASC' : 'DESC';
  return {
    sql: `SELECT * FROM evidence${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq ${order} LIMIT ${limit}`,
    args,
  };
}

export interface CheckpointRow {
  seq: number | string;
  hash: string;
  time: string;
  signature: string;
}

export const rowToCheckpoint = (r: CheckpointRow): Checkpoint => ({
  seq: Number(r.seq),
  hash: r.hash,
  time: r.time,
  signature: r.signature,
});
