// Both dialects of the store's own tables (prune previews, freezes): units of work written once, run in one
// transaction on SQLite (IMMEDIATE) or PostgreSQL (one client).
import type pg from 'pg';
import type Database from 'better-sqlite3';

/** One statement: `?` placeholders (numbered for PostgreSQL); `all` gives rows, `run` the changed-row count. */
export interface Step {
  op: 'all' | 'run';
  sql: string;
  args: unknown[];
}
export const all = (sql: string, args: unknown[] = []): Step => ({ op: 'all', sql, args });
export const run = (sql: string, args: unknown[] = []): Step => ({ op: 'run', sql, args });
/**
 * A unit of work written once for both dialects: it yields statements and receives their results. SQLite
 * runs it synchronously inside one IMMEDIATE transaction (nothing else on the connection can interleave);
 * PostgreSQL in one transaction on one client.
 */
export type Work<T> = Generator<Step, T, unknown>;

export interface Dialect {
  exec(s: Step): Promise<unknown>;
  tx<T>(work: () => Work<T>): Promise<T>;
  /** appended to a SELECT that must hold its rows until the transaction ends (its other writers wait) */
  forUpdate: string;
  /**
   * An SQL expression for the database server's clock in epoch milliseconds: one clock for every replica, where
   * each process's own may be minutes off (open-intents.ts judges staleness by it)
   */
  nowMs: string;
}

function sqliteDialect(db: Database.Database): Dialect {
  const exec = (s: Step): unknown =>
    s.op === 'all' ? db.prepare(s.sql).all(...s.args) : db.prepare(s.sql).run(...s.args).changes;
  return {
    async exec(s) {
      return exec(s);
    },
    forUpdate: '',
    // SQLite runs in this process: its clock is the host's
    nowMs: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
    async tx<T>(work: () => Work<T>): Promise<T> {
      // BEGIN IMMEDIATE takes the write lock first: another process on the same file waits for the whole unit
      return db
        .transaction(() => {
          const it = work();
          let r = it.next();
          while (!r.done) r = it.next(exec(r.value));
          return r.value;
        })
        .immediate();
    },
  };
}

/** `?` placeholders as PostgreSQL's `$1, $2, …` */
export const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

function postgresDialect(pool: pg.Pool): Dialect {
  const exec = async (c: pg.Pool | pg.PoolClient, s: Step): Promise<unknown> => {
    const r = await c.query(numbered(s.sql), s.args);
    return s.op === 'all' ? r.rows : (r.rowCount ?? 0);
  };
  return {
    exec: (s) => exec(pool, s),
    forUpdate: ' FOR UPDATE',
    // the server's wall clock at the statement (not the transaction's start)
    nowMs: 'CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)',
    async tx<T>(work: () => Work<T>): Promise<T> {
      const c = await pool.connect();
      // a checked-out client whose server goes away emits 'error': the query in flight fails anyway
      const onError = () => undefined;
      c.on('error', onError);
      try {
        await c.query('BEGIN');
        const it = work();
        let r = it.next();
        while (!r.done) r = it.next(await exec(c, r.value));
        await c.query('COMMIT');
        c.off('error', onError);
        c.release();
        return r.value;
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        c.off('error', onError);
        c.release(e instanceof Error ? e : new Error(String(e)));
        throw e;
      }
    },
  };
}

/** The evidence store's own connection (SQLite) or pool (PostgreSQL): one database, one migration list. */
export function dialectOf(store: { readonly kind: 'sqlite' | 'postgres' }): Dialect {
  if (store.kind === 'sqlite') return sqliteDialect((store as unknown as { db: Database.Database }).db);
  return postgresDialect((store as unknown as { pool: pg.Pool }).pool);
}
