// Intents with no outcome yet, in the store's database (table `open_intents`, migration 14): the invariant "every
// recorded intent gets exactly one outcome, eventually" holds when the process acting dies half-way too.
//
// `recorder.act()` opens a row right after its intent is recorded; its outcome deletes the row in the outcome's own
// transaction (AppendGuard); while the action runs its process renews `alive_at` several times per `staleMs`. A row
// nobody renewed for `staleMs` belongs to a process that stopped (a crash, a SIGKILL, a lost node): a replica
// records `action.interrupted` for it in a transaction that deletes the row as it read it — whether the action took
// effect is unknown, and the record says so; what a recovery then does (a prune's journal, a freeze's takeover) is
// recorded as its own action. Exactly one of the outcome and the sweep deletes the row, so an intent has exactly one
// outcome (issue 42's chaos matrix: PostgreSQL stopped between an action and its outcome gave two before).
// Staleness is the only sign of a stopped process (several live replicas may share a host name: tests do), and it is
// judged by the database's clock, never a process's: replicas whose clocks are minutes apart (issue 42's clock-skew
// cells: ±2 min against a 2-minute staleness) would otherwise take each other's running actions for stopped ones. A
// process cut off from the database for longer than `staleMs` while its action still runs may get its intent marked
// interrupted too; what it did then follows as `action.resolved` (a note, not a second outcome).
//
// The row is a recovery aid, not the evidence: when it cannot be written the action still goes on (its intent is
// recorded), and the failure is logged.
import { hostname } from 'node:os';
import { all, run, type Dialect } from '../store/dialect.ts';
import type { AppendGuard } from './store.ts';

export interface OpenIntentRow {
  seq: number;
  type: string;
  replica: string;
  aliveAt: number;
}

export interface OpenIntentsOptions {
  /** how often a process renews the rows of its running actions (default 10 s) */
  heartbeatMs?: number;
  /** a row not renewed for this long belongs to a process that stopped (default 120 s) */
  staleMs?: number;
  /** this process: `<host>/<pid>/<random>` */
  replica?: string;
  log?: { warn(o: object, m: string): void };
}

type Row = { seq: number | string; type: string; replica: string; alive_at: number | string };
const rowOf = (r: Row): OpenIntentRow => ({
  seq: Number(r.seq),
  type: r.type,
  replica: r.replica,
  aliveAt: Number(r.alive_at),
});

export class OpenIntents {
  readonly replica: string;
  readonly heartbeatMs: number;
  readonly staleMs: number;
  private readonly running = new Set<number>();

  constructor(
    private readonly db: Dialect,
    private readonly opts: OpenIntentsOptions = {},
  ) {
    this.replica = opts.replica ?? `${hostname()}/${process.pid}/${Math.random().toString(36).slice(2, 10)}`;
    this.staleMs = opts.staleMs ?? 120_000;
    // renewed several times within the staleness, however short it is configured (tests: 2 s)
    this.heartbeatMs = opts.heartbeatMs ?? Math.max(100, Math.min(10_000, Math.floor(this.staleMs / 4)));
  }

  /** `?` bound to `now` where a test gives a time, else the database's clock */
  private at(now: number | undefined): { sql: string; args: number[] } {
    return now === undefined ? { sql: this.db.nowMs, args: [] } : { sql: '?', args: [now] };
  }

  /** the intents whose row this process wrote (its outcome then deletes it in the same transaction) */
  private readonly rows = new Set<number>();

  /**
   * The guard of intent `seq`'s outcome: its row deleted in the outcome's own transaction, so exactly one of the
   * outcome and a sweep's `action.interrupted` is recorded. Undefined when its row was never written.
   */
  outcomeGuard(seq: number): AppendGuard | undefined {
    return this.rows.has(seq)
      ? { sql: 'DELETE FROM open_intents WHERE seq = ? AND replica = ?', args: [seq, this.replica] }
      : undefined;
  }

  /** The guard of a sweep's `action.interrupted` for a stale row: still there, and not renewed since it was read. */
  claimGuard(r: OpenIntentRow): AppendGuard {
    return {
      sql: 'DELETE FROM open_intents WHERE seq = ? AND replica = ? AND alive_at = ?',
      args: [r.seq, r.replica, r.aliveAt],
    };
  }

  /** The outcome of `seq` was written (its row went with it): nothing more to renew. */
  settled(seq: number): void {
    this.running.delete(seq);
    this.rows.delete(seq);
  }

  /** The intent `seq` was recorded and its action starts (`now`: tests only; else the database's clock). */
  async opened(seq: number, type: string, now?: number): Promise<void> {
    this.running.add(seq);
    const t = this.at(now);
    await this.db
      .exec(
        run(`INSERT INTO open_intents (seq, type, replica, alive_at) VALUES (?, ?, ?, ${t.sql})`, [
          seq,
          type,
          this.replica,
          ...t.args,
        ]),
      )
      .then(
        () => void this.rows.add(seq),
        (e: unknown) => this.warn(e, 'cannot note an open intent: a crash now would leave it without outcome'),
      );
  }

  /** The intent's outcome was recorded. */
  async closed(seq: number): Promise<void> {
    this.running.delete(seq);
    await this.db
      .exec(run('DELETE FROM open_intents WHERE seq = ?', [seq]))
      .catch((e: unknown) => this.warn(e, 'cannot clear an open intent'));
  }

  /** Renews the rows of this process's running actions (`now`: tests only; else the database's clock). */
  async beat(now?: number): Promise<void> {
    const seqs = [...this.running];
    if (!seqs.length) return;
    const t = this.at(now);
    await this.db
      .exec(
        run(`UPDATE open_intents SET alive_at = ${t.sql} WHERE seq IN (${seqs.map(() => '?').join(', ')})`, [
          ...t.args,
          ...seqs,
        ]),
      )
      .catch((e: unknown) => this.warn(e, 'cannot renew open intents'));
  }

  /**
   * Claims the rows of processes that stopped (not renewed for `staleMs` by the database's clock, or by `now` where
   * a test gives it; never this process's own). Each row is claimed by one caller only (read and deleted in one
   * transaction).
   */
  /** The rows of processes that stopped (not renewed for `staleMs`), read only: each is claimed with claimGuard. */
  async stale(now?: number): Promise<OpenIntentRow[]> {
    const before =
      now === undefined
        ? { sql: `${this.db.nowMs} - ?`, args: [this.staleMs] }
        : { sql: '?', args: [now - this.staleMs] };
    const rows = (await this.db.exec(
      all(
        `SELECT seq, type, replica, alive_at FROM open_intents WHERE replica <> ? AND alive_at < ${before.sql} ORDER BY seq`,
        [this.replica, ...before.args],
      ),
    )) as Row[];
    return rows.map(rowOf);
  }

  async claimStopped(now?: number): Promise<OpenIntentRow[]> {
    const mine = this.replica;
    // a bound time is computed here (PostgreSQL cannot type `$1 - $2`); the database's is computed there
    const before =
      now === undefined
        ? { sql: `${this.db.nowMs} - ?`, args: [this.staleMs] }
        : { sql: '?', args: [now - this.staleMs] };
    const forUpdate = this.db.forUpdate;
    return this.db.tx(function* () {
      const rows = (yield all(
        `SELECT seq, type, replica, alive_at FROM open_intents WHERE replica <> ? AND alive_at < ${before.sql} ORDER BY seq${forUpdate}`,
        [mine, ...before.args],
      )) as Row[];
      if (!rows.length) return [];
      yield run(
        `DELETE FROM open_intents WHERE seq IN (${rows.map(() => '?').join(', ')})`,
        rows.map((r) => r.seq),
      );
      return rows.map(rowOf);
    });
  }

  private warn(e: unknown, msg: string): void {
    this.opts.log?.warn({ err: e instanceof Error ? e.message : String(e) }, msg);
  }
}
