import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { EvidenceEvent, EvidenceInput, VerifyResult } from '../../domain/evidence.ts';
import {
  link,
  rowToEvent,
  type AppendGuard,
  type Checkpoint,
  type EvidenceQuery,
  type EvidenceStore,
  type Row,
} from './store.ts';
import { MIGRATIONS } from '../store/migrations.ts';
import { buildEvidenceQuery, rowToCheckpoint, type CheckpointRow } from './store-query.ts';
import { verifyStore } from './store-verify.ts';

export class SqliteEvidenceStore implements EvidenceStore {
  readonly kind = 'sqlite' as const;
  private readonly insert: Database.Statement;
  private readonly appendTx: Database.Transaction<(e: EvidenceInput) => EvidenceEvent>;
  private readonly appendIfTx: Database.Transaction<(e: EvidenceInput, g: AppendGuard) => EvidenceEvent | null>;

  private constructor(readonly db: Database.Database) {
    this.insert = db.prepare(
      'INSERT INTO evidence (seq, time, type, actor, app, cluster, env, data, prev_hash, hash) VALUES (@seq, @time, @type, @actor, @app, @cluster, @env, @data, @prevHash, @hash)',
    );
    const head = db.prepare('SELECT seq, hash FROM evidence ORDER BY seq DESC LIMIT 1');
    const setHead = db.prepare(
      'INSERT INTO evidence_head (id, seq, hash) VALUES (1, @seq, @hash) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash',
    );
    this.appendTx = db.transaction((e: EvidenceInput) => {
      const prev = head.get() as { seq: number; hash: string } | undefined;
      const ev = link(prev ? { seq: Number(prev.seq), hash: prev.hash } : undefined, e);
      this.insert.run({ ...ev, data: JSON.stringify(ev.data) });
      setHead.run({ seq: ev.seq, hash: ev.hash });
      return ev;
    });
    this.appendIfTx = db.transaction((e: EvidenceInput, g: AppendGuard) =>
      db.prepare(g.sql).run(...g.args).changes === 0 ? null : this.appendTx(e),
    );
  }

  static open(dataDir: string, file = 'evidence.sqlite'): SqliteEvidenceStore {
    // owner-only: the data directory also holds the render cache (Git content, maybe plain-text Secrets);
    // SQLite gives the -wal and -shm files the database file's mode, so creating it 0600 covers them
    if (!mkdirSync(dataDir, { recursive: true, mode: 0o700 })) {
      try {
        chmodSync(dataDir, 0o700);
      } catch {
        /* an existing directory we do not own (a mounted volume): its owner decides; our files stay 0600 */
      }
    }
    const path = join(dataDir, file);
    closeSync(openSync(path, 'a', 0o600));
    for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    const applied = new Set(
      (db.prepare('SELECT id FROM schema_migrations').all() as Array<{ id: number }>).map((r) => r.id),
    );
    for (const m of MIGRATIONS) {
      if (applied.has(m.id)) continue;
      db.transaction(() => {
        for (const s of [...m.sql, ...(m.sqlite ?? [])]) db.exec(s);
        db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)').run(m.id, new Date().toISOString());
      }).immediate();
    }
    return new SqliteEvidenceStore(db);
  }

  async append(e: EvidenceInput): Promise<EvidenceEvent> {
    // IMMEDIATE: take the write lock before reading the head, so two processes never fork the chain
    return this.appendTx.immediate(e);
  }

  async appendIf(e: EvidenceInput, guard: AppendGuard): Promise<EvidenceEvent | null> {
    return this.appendIfTx.immediate(e, guard);
  }

  // one prepared statement per query shape (filters present, not their values): pages and export batches reuse it
  private readonly statements = new Map<string, Database.Statement>();

  private prepared(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size > 200) this.statements.clear();
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  async list(q: EvidenceQuery = {}): Promise<EvidenceEvent[]> {
    return this.listRows(q).map(rowToEvent);
  }

  async probeWrite(): Promise<void> {
    this.prepared('INSERT INTO store_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at').run(
      Date.now(),
    );
  }

  /** the stored rows themselves (data as its JSON text): exports and benchmarks skip the parse */
  listRows(q: EvidenceQuery = {}): Row[] {
    const { sql, args } = buildEvidenceQuery(q, 'sqlite');
    return this.prepared(sql).all(...args) as Row[];
  }

  async addCheckpoint(c: Checkpoint): Promise<boolean> {
    const r = this.prepared(
      'INSERT INTO evidence_checkpoints (seq, hash, time, signature) VALUES (?, ?, ?, ?) ON CONFLICT (seq) DO NOTHING',
    ).run(c.seq, c.hash, c.time, c.signature);
    return r.changes === 1;
  }

  async checkpoints(): Promise<Checkpoint[]> {
    return this.checkpointsNow();
  }

  private checkpointsNow(): Checkpoint[] {
    return (this.prepared('SELECT * FROM evidence_checkpoints ORDER BY seq').all() as CheckpointRow[]).map(
      rowToCheckpoint,
    );
  }

  async latestDataByApp(type: string, field: string): Promise<Map<string, string>> {
    const rows = this.db
      .prepare(
        'SELECT app, data FROM evidence WHERE seq IN (SELECT MAX(seq) FROM evidence WHERE type = ? AND app IS NOT NULL GROUP BY app)',
      )
      .all(type) as Array<{ app: string; data: string }>;
    const out = new Map<string, string>();
    for (const r of rows) {
      const v = (JSON.parse(r.data) as Record<string, unknown>)[field];
      if (typeof v === 'string') out.set(r.app, v);
    }
    return out;
  }

  async verify(opts: { publicKey?: string } = {}): Promise<VerifyResult> {
    // one (synchronous) read transaction: the head, the checkpoints and the rows are one snapshot
    return this.db.transaction(() => {
      const head = this.db.prepare('SELECT seq, hash FROM evidence_head WHERE id = 1').get() as
        { seq: number; hash: string } | undefined;
      const rows = this.db.prepare('SELECT * FROM evidence ORDER BY seq').iterate() as IterableIterator<Row>;
      return verifyStore(
        rows,
        head ? { seq: Number(head.seq), hash: head.hash } : undefined,
        this.checkpointsNow(),
        opts.publicKey,
      );
    })();
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
