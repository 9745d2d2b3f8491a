// The evidence store: one repository interface, two backends (SQLite file by
// default, PostgreSQL when DATABASE_URL is set; opened by open.ts), one migration set.
// Events are append-only: the tables carry triggers that refuse UPDATE and
// DELETE, and every event is hash-chained to the one before it.
import { createHash } from 'node:crypto';
import {
  chainText,
  GENESIS_HASH,
  verifyChain,
  type EvidenceEvent,
  type EvidenceInput,
  type VerifyResult,
} from '../../domain/evidence.ts';
import type { Checkpoint } from './signing.ts';

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export interface EvidenceQuery {
  app?: string;
  cluster?: string;
  env?: string;
  actor?: string;
  /** one type, or any of several */
  type?: string | string[];
  /** ISO times, both inclusive */
  from?: string;
  to?: string;
  /** case-insensitive substring of actor, type, app or data */
  text?: string;
  afterSeq?: number;
  beforeSeq?: number;
  limit?: number;
  /** by seq; newest first unless 'asc' (exports) */
  order?: 'asc' | 'desc';
}

/** A signed statement of the chain head: `seq` had `hash` at `time` (evidence/signing.ts). */
export type { Checkpoint };

/** A unit of work inside the store's append transaction (fail closed: if it throws, nothing is written). */
export type InTransaction<T> = (append: (e: EvidenceInput) => EvidenceEvent) => T | Promise<T>;

/**
 * A statement (`?` placeholders) run first inside an append's transaction: the record is appended only when it
 * changes a row (an open intent's row deleted by the one who records its outcome: exactly one of them does).
 */
export interface AppendGuard {
  sql: string;
  args: unknown[];
}

export interface EvidenceStore {
  readonly kind: 'sqlite' | 'postgres';
  append(e: EvidenceInput): Promise<EvidenceEvent>;
  /** `append`, only when `guard` changes a row in the same transaction; null (nothing written) when it does not */
  appendIf?(e: EvidenceInput, guard: AppendGuard): Promise<EvidenceEvent | null>;
  list(q?: EvidenceQuery): Promise<EvidenceEvent[]>;
  /** one small committed write outside the chain (table store_probe): whether the store takes writes now */
  probeWrite?(): Promise<void>;
  /** the latest `data.revision` recorded per app for one event type */
  latestDataByApp(type: string, field: string): Promise<Map<string, string>>;
  /** the chain, and every signed checkpoint (its signature when `publicKey` is given, and its hash) */
  verify(opts?: { publicKey?: string }): Promise<VerifyResult>;
  /** signed checkpoints (optional: in-memory test stores have none); false when one for that seq exists */
  addCheckpoint?(c: Checkpoint): Promise<boolean>;
  checkpoints?(): Promise<Checkpoint[]>;
  close(): Promise<void>;
}

export interface Row {
  seq: number | string;
  time: string;
  type: string;
  actor: string;
  app: string | null;
  cluster: string | null;
  env: string | null;
  data: string;
  prev_hash: string;
  hash: string;
}

export function rowToEvent(r: Row): EvidenceEvent {
  return {
    seq: Number(r.seq),
    time: r.time,
    type: r.type as EvidenceEvent['type'],
    actor: r.actor,
    app: r.app,
    cluster: r.cluster,
    env: r.env,
    data: JSON.parse(r.data) as Record<string, unknown>,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

/** Builds the next event of the chain. */
export function link(prev: { seq: number; hash: string } | undefined, e: EvidenceInput): EvidenceEvent {
  const base = {
    seq: (prev?.seq ?? 0) + 1,
    time: e.time,
    type: e.type,
    actor: e.actor,
    app: e.app ?? null,
    cluster: e.cluster ?? null,
    env: e.env ?? null,
    data: e.data,
    prevHash: prev?.hash ?? GENESIS_HASH,
  };
  return { ...base, hash: sha256(chainText(base)) };
}

export function verifyRows(rows: Iterable<Row>, head?: { seq: number; hash: string }): VerifyResult {
  function* events() {
    for (const r of rows) yield rowToEvent(r);
  }
  return verifyChain(events(), sha256, head);
}
