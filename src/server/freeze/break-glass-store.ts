// Break-glass requests through planned windows in the evidence store's database (migration 17). A row is made by
// the request and moved on by one guarded UPDATE per step (requested → approved → ended; requested → lapsed), so
// of two approvers, or two replicas ending it, exactly one moves it; the partial unique index keeps one open
// request per app and occurrence.
import type { Identity } from '../auth/index.ts';
import type { BreakGlassState } from '../../domain/break-glass.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import { all, dialectOf, run, type Dialect } from '../store/dialect.ts';

export interface BreakGlass {
  id: string;
  window: string;
  /** the occurrence it goes through: [startsAt, endsAt) */
  startsAt: number;
  endsAt: number;
  app: string;
  cluster: string;
  env: string;
  reason: string;
  minutes: number;
  requestedBy: string;
  requester: Identity;
  requestedAt: string;
  state: BreakGlassState;
  approvedBy: string | null;
  approvedAt: string | null;
  /** approved: when the window holds the app again */
  until: number | null;
  endedAt: string | null;
  note: string | null;
}

interface Row {
  id: string;
  window_name: string;
  starts_at: number | string;
  ends_at: number | string;
  app: string;
  cluster: string;
  env: string;
  reason: string;
  minutes: number | string;
  requested_by: string;
  requester: string;
  requested_at: string;
  state: string;
  approved_by: string | null;
  approved_at: string | null;
  until_at: number | string | null;
  ended_at: string | null;
  note: string | null;
}

const of = (r: Row): BreakGlass => ({
  id: r.id,
  window: r.window_name,
  startsAt: Number(r.starts_at),
  endsAt: Number(r.ends_at),
  app: r.app,
  cluster: r.cluster,
  env: r.env,
  reason: r.reason,
  minutes: Number(r.minutes),
  requestedBy: r.requested_by,
  requester: JSON.parse(r.requester) as Identity,
  requestedAt: r.requested_at,
  state: r.state as BreakGlassState,
  approvedBy: r.approved_by,
  approvedAt: r.approved_at,
  until: r.until_at === null ? null : Number(r.until_at),
  endedAt: r.ended_at,
  note: r.note,
});

export class BreakGlassStore {
  private readonly d: Dialect;

  constructor(store: EvidenceStore) {
    this.d = dialectOf(store);
  }

  /** Adds a request; false when the app has an open one for this occurrence already. */
  async create(
    b: Omit<BreakGlass, 'state' | 'approvedBy' | 'approvedAt' | 'until' | 'endedAt' | 'note'>,
  ): Promise<boolean> {
    const n = (await this.d.exec(
      run(
        `INSERT INTO window_break_glass (id, window_name, starts_at, ends_at, app, cluster, env, reason, minutes,
           requested_by, requester, requested_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'requested')
         ON CONFLICT DO NOTHING`,
        [
          b.id,
          b.window,
          b.startsAt,
          b.endsAt,
          b.app,
          b.cluster,
          b.env,
          b.reason,
          b.minutes,
          b.requestedBy,
          JSON.stringify(b.requester),
          b.requestedAt,
        ],
      ),
    )) as number;
    return n === 1;
  }

  async get(id: string): Promise<BreakGlass | undefined> {
    const rows = (await this.d.exec(all('SELECT * FROM window_break_glass WHERE id = ?', [id]))) as Row[];
    return rows[0] ? of(rows[0]) : undefined;
  }

  /** The newest requests first; `open`: only those requested or approved. */
  async list(opts: { open?: boolean; limit?: number } = {}): Promise<BreakGlass[]> {
    const rows = (await this.d.exec(
      all(
        `SELECT * FROM window_break_glass${opts.open ? " WHERE state IN ('requested', 'approved')" : ''} ORDER BY requested_at DESC LIMIT ?`,
        [opts.limit ?? 200],
      ),
    )) as Row[];
    return rows.map(of);
  }

  /** requested → approved, once: false when it is not requested any more. */
  async approve(id: string, by: string, at: string, until: number): Promise<boolean> {
    const n = (await this.d.exec(
      run(
        "UPDATE window_break_glass SET state = 'approved', approved_by = ?, approved_at = ?, until_at = ? WHERE id = ? AND state = 'requested'",
        [by, at, until, id],
      ),
    )) as number;
    return n === 1;
  }

  /** `from` → `to` with a note, once: false when it is not in `from` any more. */
  async finish(id: string, from: BreakGlassState, to: BreakGlassState, note: string, at: string): Promise<boolean> {
    const n = (await this.d.exec(
      run('UPDATE window_break_glass SET state = ?, note = ?, ended_at = ? WHERE id = ? AND state = ?', [
        to,
        note.slice(0, 500),
        at,
        id,
        from,
      ]),
    )) as number;
    return n === 1;
  }
}
