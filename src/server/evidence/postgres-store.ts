import pg from 'pg';
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
import { numbered } from '../store/dialect.ts';
import { MIGRATIONS } from '../store/migrations.ts';
import { buildEvidenceQuery, rowToCheckpoint, type CheckpointRow } from './store-query.ts';
import { verifyStorePages } from './store-verify.ts';

// advisory lock key that serializes appends across BFF replicas
const APPEND_LOCK = 0x6e76_6964;

/**
 * A client checked out of the pool for a transaction. The pool only listens for errors of idle clients: a
 * checked-out one whose server goes away (stopped, restarted, network cut) emits 'error' with nobody
 * listening, which would crash the BFF. The query in flight fails with that error anyway, so the listener
 * only has to exist; `done(err)` hands the client back, or drops it when the transaction failed (it may be
 * the broken connection: it is never handed out again). Every `pool.connect()` in the BFF goes through it.
 */
export async function checkOut(pool: pg.Pool): Promise<pg.PoolClient & { done(err?: unknown): void }> {
  const c = await pool.connect();
  const onError = () => undefined;
  c.on('error', onError);
  return Object.assign(c, {
    done(err?: unknown) {
      c.off('error', onError);
      c.release(err === undefined ? undefined : err instanceof Error ? err : new Error(String(err)));
    },
  });
}

export class PostgresEvidenceStore implements EvidenceStore {
  readonly kind = 'postgres' as const;

  private constructor(readonly pool: pg.Pool) {}

  static async open(url: string): Promise<PostgresEvidenceStore> {
    // A pool, not one client: a connection that loses its server is dropped and the next append opens a new
    // one, so appends resume by themselves once PostgreSQL is back. Timeouts bound how long an action waits
    // for a server that is down or hangs: the recorder then refuses it (503) instead of hanging with it.
    const pool = new pg.Pool({
      connectionString: url,
      max: 8,
      connectionTimeoutMillis: 10_000,
      query_timeout: 15_000,
      keepAlive: true,
    });
    // an idle client that loses its server must not crash the BFF; the next query reconnects
    pool.on('error', (err) =>
      process.stderr.write(`evidence store: idle PostgreSQL connection failed: ${err.message}\n`),
    );
    const c = await checkOut(pool);
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK + 1]);
      await c.query('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
      const applied = new Set(
        (await c.query<{ id: number }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id),
      );
      for (const m of MIGRATIONS) {
        if (applied.has(m.id)) continue;
        for (const s of [...m.sql, ...(m.postgres ?? [])]) await c.query(s);
        await c.query('INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)', [
          m.id,
          new Date().toISOString(),
        ]);
      }
      await c.query('COMMIT');
      c.done();
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      c.done(e);
      throw e;
    }
    return new PostgresEvidenceStore(pool);
  }

  async append(e: EvidenceInput): Promise<EvidenceEvent> {
    return (await this.appendTx(e)) as EvidenceEvent;
  }

  async appendIf(e: EvidenceInput, guard: AppendGuard): Promise<EvidenceEvent | null> {
    return this.appendTx(e, guard);
  }

  private async appendTx(e: EvidenceInput, guard?: AppendGuard): Promise<EvidenceEvent | null> {
    const c = await checkOut(this.pool);
    try {
      await c.query('BEGIN');
      if (guard && ((await c.query(numbered(guard.sql), guard.args)).rowCount ?? 0) === 0) {
        await c.query('ROLLBACK');
        c.done();
        return null;
      }
      await c.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
      const prev = (
        await c.query<{ seq: string; hash: string }>('SELECT seq, hash FROM evidence ORDER BY seq DESC LIMIT 1')
      ).rows[0];
      const ev = link(prev ? { seq: Number(prev.seq), hash: prev.hash } : undefined, e);
      await c.query(
        'INSERT INTO evidence (seq, time, type, actor, app, cluster, env, data, prev_hash, hash) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)',
        [ev.seq, ev.time, ev.type, ev.actor, ev.app, ev.cluster, ev.env, JSON.stringify(ev.data), ev.prevHash, ev.hash],
      );
      await c.query(
        'INSERT INTO evidence_head (id, seq, hash) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash',
        [ev.seq, ev.hash],
      );
      await c.query('COMMIT');
      c.done();
      return ev;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      c.done(err);
      throw err;
    }
  }

  async probeWrite(): Promise<void> {
    await this.pool.query(
      'INSERT INTO store_probe (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = excluded.at',
      [Date.now()],
    );
  }

  async list(q: EvidenceQuery = {}): Promise<EvidenceEvent[]> {
    const { sql, args } = buildEvidenceQuery(q, 'postgres');
    return (await this.pool.query<Row>(sql, args)).rows.map(rowToEvent);
  }

  async addCheckpoint(c: Checkpoint): Promise<boolean> {
    const r = await this.pool.query(
      'INSERT INTO evidence_checkpoints (seq, hash, time, signature) VALUES ($1, $2, $3, $4) ON CONFLICT (seq) DO NOTHING',
      [c.seq, c.hash, c.time, c.signature],
    );
    return r.rowCount === 1;
  }

  async checkpoints(): Promise<Checkpoint[]> {
    return (await this.pool.query<CheckpointRow>('SELECT * FROM evidence_checkpoints ORDER BY seq')).rows.map(
      rowToCheckpoint,
    );
  }

  async latestDataByApp(type: string, field: string): Promise<Map<string, string>> {
    const rows = (
      await this.pool.query<{ app: string; data: string }>(
        'SELECT app, data FROM evidence WHERE seq IN (SELECT MAX(seq) FROM evidence WHERE type = $1 AND app IS NOT NULL GROUP BY app)',
        [type],
      )
    ).rows;
    const out = new Map<string, string>();
    for (const r of rows) {
      const v = (JSON.parse(r.data) as Record<string, unknown>)[field];
      if (typeof v === 'string') out.set(r.app, v);
    }
    return out;
  }

  async verify(opts: { publicKey?: string } = {}): Promise<VerifyResult> {
    // one snapshot for the head, the checkpoints and the rows: an append committed while they are read (the
    // console keeps recording) must not look like a broken chain
    const c = await checkOut(this.pool);
    let failed: unknown;
    try {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const checkpoints = (await c.query<CheckpointRow>('SELECT * FROM evidence_checkpoints ORDER BY seq')).rows.map(
        rowToCheckpoint,
      );
      const head = (await c.query<{ seq: string; hash: string }>('SELECT seq, hash FROM evidence_head WHERE id = 1'))
        .rows[0];
      // checked page by page as they are read (keyset pages in this one snapshot): memory stays one page,
      // however long the chain (bench/evidence-pg.ts prints the peak RSS at 1,000,000 events)
      const pageSize = 5000;
      const read = (after: number) => {
        const q = c.query<Row>('SELECT * FROM evidence WHERE seq > $1 ORDER BY seq LIMIT $2', [after, pageSize]);
        q.catch(() => undefined); // a read ahead nobody awaits (the chain broke before it) fails quietly
        return q;
      };
      async function* pages(): AsyncGenerator<Row[]> {
        let next = read(0);
        for (;;) {
          const page = (await next).rows;
          const full = page.length === pageSize;
          // the next page is read while this one is checked (at most two pages in memory)
          if (full) next = read(Number(page[page.length - 1]?.seq));
          yield page;
          if (!full) return;
        }
      }
      const result = await verifyStorePages(
        pages(),
        head ? { seq: Number(head.seq), hash: head.hash } : undefined,
        checkpoints,
        opts.publicKey,
      );
      await c.query('COMMIT');
      return result;
    } catch (e) {
      failed = e;
      await c.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      c.done(failed);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
