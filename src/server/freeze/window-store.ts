// Planned freeze windows in the evidence store's database (migration 16): the windows, and the occurrences the
// scheduler started. An occurrence's row is inserted once (primary key: window and start), so two replicas, or a
// Lease holder and its successor, start it once; its `apps` are those frozen or extended for it so far, so a new
// holder carries on with the rest and an app on-call unfroze during the window is not frozen again.
import type { FreezeWindowSpec } from '../../domain/freeze-windows.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import { all, dialectOf, run, type Dialect } from '../store/dialect.ts';

export interface StoredWindow {
  spec: FreezeWindowSpec;
  createdBy: string;
  createdAt: string;
  deleted: { at: string; by: string; reason: string } | null;
}

export interface Occurrence {
  window: string;
  startsAt: number;
  endsAt: number;
  startedBy: string;
  /** the apps frozen or extended for it so far */
  apps: string[];
}

interface SqlWindow {
  name: string;
  spec: string;
  created_by: string;
  created_at: string;
  deleted_at: string | null;
  deleted_by: string | null;
  delete_reason: string | null;
}

interface SqlOccurrence {
  window_name: string;
  starts_at: number | string;
  ends_at: number | string;
  started_by: string;
  apps: string;
}

const windowOf = (r: SqlWindow): StoredWindow => ({
  spec: JSON.parse(r.spec) as FreezeWindowSpec,
  createdBy: r.created_by,
  createdAt: r.created_at,
  deleted: r.deleted_at ? { at: r.deleted_at, by: r.deleted_by ?? '', reason: r.delete_reason ?? '' } : null,
});

const occurrenceOf = (r: SqlOccurrence): Occurrence => ({
  window: r.window_name,
  startsAt: Number(r.starts_at),
  endsAt: Number(r.ends_at),
  startedBy: r.started_by,
  apps: JSON.parse(r.apps) as string[],
});

export class WindowStore {
  private readonly d: Dialect;

  constructor(store: EvidenceStore) {
    this.d = dialectOf(store);
  }

  /** Adds a window; false when one of that name exists (deleted ones too: a name is never reused). */
  async create(spec: FreezeWindowSpec, by: string, at: string): Promise<boolean> {
    const n = (await this.d.exec(
      run(
        'INSERT INTO freeze_windows (name, spec, created_by, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
        [spec.name, JSON.stringify(spec), by, at],
      ),
    )) as number;
    return n === 1;
  }

  async get(name: string): Promise<StoredWindow | undefined> {
    const rows = (await this.d.exec(all('SELECT * FROM freeze_windows WHERE name = ?', [name]))) as SqlWindow[];
    return rows[0] ? windowOf(rows[0]) : undefined;
  }

  /** The windows, by name; `deleted`: those deleted too. */
  async list(deleted = false): Promise<StoredWindow[]> {
    const rows = (await this.d.exec(
      all(`SELECT * FROM freeze_windows${deleted ? '' : ' WHERE deleted_at IS NULL'} ORDER BY name`, []),
    )) as SqlWindow[];
    return rows.map(windowOf);
  }

  /** Marks a window deleted (once): false when it is gone or deleted already. */
  async delete(name: string, by: string, reason: string, at: string): Promise<boolean> {
    const n = (await this.d.exec(
      run(
        'UPDATE freeze_windows SET deleted_at = ?, deleted_by = ?, delete_reason = ? WHERE name = ? AND deleted_at IS NULL',
        [at, by, reason, name],
      ),
    )) as number;
    return n === 1;
  }

  /**
   * The occurrence's row, made by this call (`started: true`) or found (another replica, or an earlier holder of the
   * Lease, started it).
   */
  async startOccurrence(
    window: string,
    startsAt: number,
    endsAt: number,
    by: string,
  ): Promise<{ started: boolean; occurrence: Occurrence }> {
    // one statement decides who started it (the primary key), on SQLite and PostgreSQL alike
    const n = (await this.d.exec(
      run(
        'INSERT INTO window_occurrences (window_name, starts_at, ends_at, started_by, apps) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
        [window, startsAt, endsAt, by, '[]'],
      ),
    )) as number;
    const rows = (await this.d.exec(
      all('SELECT * FROM window_occurrences WHERE window_name = ? AND starts_at = ?', [window, startsAt]),
    )) as SqlOccurrence[];
    if (!rows[0]) throw new Error(`occurrence ${window}@${startsAt} not found after it was started`);
    return { started: n === 1, occurrence: occurrenceOf(rows[0]) };
  }

  /** Adds apps to the occurrence's done list (a read and a write in one transaction: concurrent adds both stay). */
  async addApps(window: string, startsAt: number, apps: string[]): Promise<void> {
    if (!apps.length) return;
    const lock = this.d.forUpdate;
    await this.d.tx(function* () {
      const rows = (yield all(`SELECT apps FROM window_occurrences WHERE window_name = ? AND starts_at = ?${lock}`, [
        window,
        startsAt,
      ])) as Array<{ apps: string }>;
      if (!rows[0]) return;
      const done = new Set(JSON.parse(rows[0].apps) as string[]);
      for (const a of apps) done.add(a);
      yield run('UPDATE window_occurrences SET apps = ? WHERE window_name = ? AND starts_at = ?', [
        JSON.stringify([...done].sort()),
        window,
        startsAt,
      ]);
    });
  }

  /** Claims the "starts within the hour" announcement of an occurrence: true for the one caller that made it. */
  async announce(window: string, startsAt: number, by: string): Promise<boolean> {
    const n = (await this.d.exec(
      run(
        'INSERT INTO window_reminders (window_name, starts_at, announced_by) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
        [window, startsAt, by],
      ),
    )) as number;
    return n === 1;
  }

  /** The occurrences of a window started so far, latest first. */
  async occurrences(window: string, limit = 20): Promise<Occurrence[]> {
    const rows = (await this.d.exec(
      all('SELECT * FROM window_occurrences WHERE window_name = ? ORDER BY starts_at DESC LIMIT ?', [window, limit]),
    )) as SqlOccurrence[];
    return rows.map(occurrenceOf);
  }
}
