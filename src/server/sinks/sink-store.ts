// Each sink's cursor (the last evidence seq it took, or gave up on) and its dead letters, in the console's own
// database (SQLite or PostgreSQL; migration 9). Dead letters are not evidence: a retried one is removed.
import { all, dialectOf, run, type Dialect } from '../store/dialect.ts';

export interface DeadLetter {
  sink: string;
  seq: number;
  attempts: number;
  lastError: string;
  firstFailedAt: string;
  deadAt: string;
}

interface DeadRow {
  sink: string;
  seq: number | string;
  attempts: number | string;
  last_error: string;
  first_failed_at: string;
  dead_at: string;
}

const fromRow = (r: DeadRow): DeadLetter => ({
  sink: r.sink,
  seq: Number(r.seq),
  attempts: Number(r.attempts),
  lastError: r.last_error,
  firstFailedAt: r.first_failed_at,
  deadAt: r.dead_at,
});

export class SinkStore {
  private readonly db: Dialect;
  constructor(store: { readonly kind: 'sqlite' | 'postgres' }) {
    this.db = dialectOf(store);
  }

  async cursor(sink: string): Promise<number | undefined> {
    const rows = (await this.db.exec(all('SELECT seq FROM sink_cursors WHERE sink = ?', [sink]))) as Array<{
      seq: number | string;
    }>;
    return rows[0] ? Number(rows[0].seq) : undefined;
  }

  /** moves the cursor forward only (a late writer never takes it back) */
  async advance(sink: string, seq: number): Promise<void> {
    const now = new Date().toISOString();
    await this.db.exec(
      run(
        `INSERT INTO sink_cursors (sink, seq, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (sink) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at
         WHERE sink_cursors.seq < excluded.seq`,
        [sink, seq, now],
      ),
    );
  }

  async addDeadLetter(d: DeadLetter): Promise<void> {
    await this.db.exec(
      run(
        `INSERT INTO sink_dead_letters (sink, seq, attempts, last_error, first_failed_at, dead_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (sink, seq) DO UPDATE SET attempts = excluded.attempts, last_error = excluded.last_error,
           dead_at = excluded.dead_at`,
        [d.sink, d.seq, d.attempts, d.lastError.slice(0, 500), d.firstFailedAt, d.deadAt],
      ),
    );
  }

  async deadLetters(sink?: string, limit = 500): Promise<DeadLetter[]> {
    const rows = (await this.db.exec(
      sink
        ? all('SELECT * FROM sink_dead_letters WHERE sink = ? ORDER BY seq LIMIT ?', [sink, limit])
        : all('SELECT * FROM sink_dead_letters ORDER BY sink, seq LIMIT ?', [limit]),
    )) as DeadRow[];
    return rows.map(fromRow);
  }

  async deadLetter(sink: string, seq: number): Promise<DeadLetter | undefined> {
    const rows = (await this.db.exec(
      all('SELECT * FROM sink_dead_letters WHERE sink = ? AND seq = ?', [sink, seq]),
    )) as DeadRow[];
    return rows.map(fromRow)[0];
  }

  /** a failed retry's attempt on a row still there (never re-inserts one a successful retry removed) */
  async updateDeadLetter(
    sink: string,
    seq: number,
    d: { attempts: number; lastError: string; deadAt: string },
  ): Promise<void> {
    await this.db.exec(
      run('UPDATE sink_dead_letters SET attempts = ?, last_error = ?, dead_at = ? WHERE sink = ? AND seq = ?', [
        d.attempts,
        d.lastError.slice(0, 500),
        d.deadAt,
        sink,
        seq,
      ]),
    );
  }

  async deadLetterCount(sink: string): Promise<number> {
    const rows = (await this.db.exec(
      all('SELECT COUNT(*) AS n FROM sink_dead_letters WHERE sink = ?', [sink]),
    )) as Array<{ n: number | string }>;
    return Number(rows[0]?.n ?? 0);
  }

  async removeDeadLetter(sink: string, seq: number): Promise<boolean> {
    return (
      ((await this.db.exec(run('DELETE FROM sink_dead_letters WHERE sink = ? AND seq = ?', [sink, seq]))) as number) > 0
    );
  }
}
