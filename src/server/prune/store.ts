// Prune previews, their approvals and the intent journal of their execution, in the evidence store's
// database (tables: migration 2 in evidence-store.ts). Both dialects, one repository.
//
// State changes are row transitions guarded by the current state (`UPDATE … WHERE status = 'approved'`):
// whoever changes the row runs the prune, so concurrent approvals and several BFF replicas execute a
// preview at most once. One decision per person per preview (identity.ts samePerson), checked in the transaction
// that records it. A decision is held first (`hold`, migration 7): the same checks in one transaction with every
// other decider, so that only decisions that will count get their intent recorded (approvals.ts).
import type { PRUNE_PREVIEW_STATUSES } from '../../api/schemas.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import { all, dialectOf, run, type Dialect, type Work } from '../store/dialect.ts';
import { samePerson, type Identity } from '../auth/index.ts';

export type { Identity };

export type PreviewStatus = (typeof PRUNE_PREVIEW_STATUSES)[number];

/** A held decision is given up after this long (its process died between the hold and the decision). */
export const HOLD_MS = 30_000;

export interface Decision extends Identity {
  decision: 'approve' | 'reject';
  comment: string;
  time: string;
  evidenceSeq?: number;
}

export interface PreviewRow<Doc> {
  id: string;
  app: string;
  cluster: string;
  env: string;
  status: PreviewStatus;
  statusReason: string | null;
  snapshotHash: string;
  requiredApprovals: number;
  requester: Identity;
  createdAt: string;
  expiresAt: string;
  updatedAt: string;
  executor: string | null;
  doc: Doc;
  decisions: Decision[];
}

export type JournalState =
  | 'planned'
  | 'deleting'
  | 'deleted'
  | 'gone'
  | 'failed'
  | 'not-deleted'
  // the console stamps its approval on the object and the controller's own prune deletes it
  | 'stamping'
  | 'stamped';

export interface JournalEntry {
  position: number;
  batch: number;
  object: string;
  uid: string;
  resourceVersion: string;
  state: JournalState;
  detail: string | null;
  updatedAt: string;
}

/**
 * Why a decision cannot be taken: no such preview, not pending, expired, by its requester, by someone who decided
 * already, by someone whose decision is being recorded now, or an approval when enough are given or being given.
 */
export type DecideRefusal =
  'not-found' | 'not-pending' | 'expired' | 'requester' | 'already-decided' | 'deciding' | 'enough-approvals';

export type DecideResult<Doc> =
  | {
      ok: true;
      preview: PreviewRow<Doc>;
      /** this decision moved the preview to approved or rejected */ decided: boolean;
    }
  | { ok: false; reason: DecideRefusal; status?: PreviewStatus };

export type HoldResult = { ok: true } | { ok: false; reason: DecideRefusal; status?: PreviewStatus };

interface SqlPreview {
  id: string;
  app: string;
  cluster: string;
  env: string;
  status: string;
  status_reason: string | null;
  snapshot_hash: string;
  required_approvals: number | string;
  requester_name: string;
  requester_issuer: string;
  requester_subject: string;
  requester_person: string | null;
  created_at: string;
  expires_at: string;
  updated_at: string;
  executor: string | null;
  doc: string;
}
interface SqlDecision {
  preview_id: string;
  issuer: string;
  subject: string;
  name: string;
  person: string | null;
  decision: string;
  comment: string;
  time: string;
  evidence_seq: number | string | null;
}
interface SqlJournal {
  position: number | string;
  batch: number | string;
  object: string;
  uid: string;
  resource_version: string;
  state: string;
  detail: string | null;
  updated_at: string;
}

interface SqlHold {
  issuer: string;
  subject: string;
  name: string;
  person: string;
  decision: string;
  taken_at: number | string;
}

const toDecision = (r: SqlDecision): Decision => ({
  issuer: r.issuer,
  subject: r.subject,
  name: r.name,
  ...(r.person !== null ? { person: r.person } : {}),
  decision: r.decision as Decision['decision'],
  comment: r.comment,
  time: r.time,
  ...(r.evidence_seq !== null ? { evidenceSeq: Number(r.evidence_seq) } : {}),
});

const toJournal = (r: SqlJournal): JournalEntry => ({
  position: Number(r.position),
  batch: Number(r.batch),
  object: r.object,
  uid: r.uid,
  resourceVersion: r.resource_version,
  state: r.state as JournalState,
  detail: r.detail,
  updatedAt: r.updated_at,
});

const requesterOf = (r: SqlPreview): Identity => ({
  name: r.requester_name,
  issuer: r.requester_issuer,
  subject: r.requester_subject,
  ...(r.requester_person !== null ? { person: r.requester_person } : {}),
});

/**
 * Why `who` may not decide on this preview now (undefined: may), from the row, its decisions and the decisions
 * being recorded, read in the deciding transaction: the one rule both `hold` and `decide` apply.
 */
function refusalOf(
  row: SqlPreview | undefined,
  decisions: SqlDecision[],
  holds: SqlHold[],
  who: Identity & { decision: Decision['decision'] },
  nowMs: number,
): { reason: DecideRefusal; status?: PreviewStatus } | undefined {
  if (!row) return { reason: 'not-found' };
  if (row.status !== 'pending') return { reason: 'not-pending', status: row.status as PreviewStatus };
  if (Date.parse(row.expires_at) <= nowMs) return { reason: 'expired' };
  if (samePerson(requesterOf(row), who)) return { reason: 'requester' };
  if (decisions.some((d) => samePerson(toDecision(d), who))) return { reason: 'already-decided' };
  if (holds.some((h) => samePerson(h, who))) return { reason: 'deciding' };
  if (who.decision === 'approve') {
    const given = decisions.filter((d) => d.decision === 'approve').length;
    const coming = holds.filter((h) => h.decision === 'approve').length;
    if (given + coming >= Number(row.required_approvals)) return { reason: 'enough-approvals' };
  }
  return undefined;
}

function toPreview<Doc>(r: SqlPreview, ds: SqlDecision[]): PreviewRow<Doc> {
  return {
    id: r.id,
    app: r.app,
    cluster: r.cluster,
    env: r.env,
    status: r.status as PreviewStatus,
    statusReason: r.status_reason,
    snapshotHash: r.snapshot_hash,
    requiredApprovals: Number(r.required_approvals),
    requester: requesterOf(r),
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    updatedAt: r.updated_at,
    executor: r.executor,
    doc: JSON.parse(r.doc) as Doc,
    decisions: ds.filter((d) => d.preview_id === r.id).map(toDecision),
  };
}

function* withDecisions<Doc>(rows: SqlPreview[]): Work<PreviewRow<Doc>[]> {
  if (!rows.length) return [];
  const ds = (yield all(
    `SELECT * FROM prune_approvals WHERE preview_id IN (${rows.map(() => '?').join(', ')}) ORDER BY time, name`,
    rows.map((r) => r.id),
  )) as SqlDecision[];
  return rows.map((r) => toPreview<Doc>(r, ds));
}

const inList = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class PruneStore<Doc> {
  private readonly d: Dialect;
  /** told after every committed change of a preview or its journal (the state bus: every replica's streams) */
  onChange: ((id: string, app?: string) => void) | undefined;
  private changed(id: string, app?: string): void {
    try {
      this.onChange?.(id, app);
    } catch {
      /* a listener never fails a committed write */
    }
  }

  constructor(store: EvidenceStore) {
    this.d = dialectOf(store);
  }

  async create(p: Omit<PreviewRow<Doc>, 'decisions' | 'executor' | 'updatedAt'>): Promise<void> {
    await this.d.exec(
      run(
        `INSERT INTO prune_previews (id, app, cluster, env, status, status_reason, snapshot_hash, required_approvals,
          requester_name, requester_issuer, requester_subject, requester_person, created_at, expires_at, updated_at,
          executor, doc)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
        [
          p.id,
          p.app,
          p.cluster,
          p.env,
          p.status,
          p.statusReason,
          p.snapshotHash,
          p.requiredApprovals,
          p.requester.name,
          p.requester.issuer,
          p.requester.subject,
          p.requester.person ?? null,
          p.createdAt,
          p.expiresAt,
          p.createdAt,
          JSON.stringify(p.doc),
        ],
      ),
    );
    this.changed(p.id, p.app);
  }

  async get(id: string): Promise<PreviewRow<Doc> | undefined> {
    return (
      await this.d.tx(function* () {
        const rows = (yield all('SELECT * FROM prune_previews WHERE id = ?', [id])) as SqlPreview[];
        return yield* withDecisions<Doc>(rows);
      })
    )[0];
  }

  async list(status?: PreviewStatus, limit = 200): Promise<PreviewRow<Doc>[]> {
    return this.d.tx(function* () {
      const rows = (yield status
        ? all('SELECT * FROM prune_previews WHERE status = ? ORDER BY created_at DESC LIMIT ?', [status, limit])
        : all('SELECT * FROM prune_previews ORDER BY created_at DESC LIMIT ?', [limit])) as SqlPreview[];
      return yield* withDecisions<Doc>(rows);
    });
  }

  /** Previews per status (metrics). */
  async countByStatus(): Promise<Partial<Record<PreviewStatus, number>>> {
    const rows = (await this.d.exec(all('SELECT status, COUNT(*) AS n FROM prune_previews GROUP BY status'))) as Array<{
      status: string;
      n: number | string;
    }>;
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /**
   * Holds a decision about to be recorded: in one transaction holding the preview row, the checks `decide` makes
   * (pending, not expired, not the requester, not decided or being decided by the same person) and, for an
   * approval, room for it (the approvals given and held stay within the number needed). Exactly the decisions
   * that can count pass, across requests and replicas; the caller records the intent only then, and `decide`
   * (or `release`) ends the hold. A hold older than HOLD_MS is given up.
   */
  async hold(id: string, who: Identity & { person: string; decision: Decision['decision'] }): Promise<HoldResult> {
    const lock = `SELECT * FROM prune_previews WHERE id = ?${this.d.forUpdate}`;
    const nowMs = Date.now();
    return this.d.tx(function* (): Work<HoldResult> {
      const row = ((yield all(lock, [id])) as SqlPreview[])[0];
      yield run('DELETE FROM prune_decision_holds WHERE preview_id = ? AND taken_at < ?', [id, nowMs - HOLD_MS]);
      const decisions = (yield all('SELECT * FROM prune_approvals WHERE preview_id = ?', [id])) as SqlDecision[];
      const holds = (yield all('SELECT * FROM prune_decision_holds WHERE preview_id = ?', [id])) as SqlHold[];
      const refused = refusalOf(row, decisions, holds, who, nowMs);
      if (refused) return { ok: false, ...refused };
      yield run(
        `INSERT INTO prune_decision_holds (preview_id, person, issuer, subject, name, decision, taken_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [id, who.person, who.issuer, who.subject, who.name, who.decision, nowMs],
      );
      return { ok: true };
    });
  }

  /** Ends a hold whose decision was not recorded (its intent could not be written, or it lost a race). */
  async release(id: string, person: string): Promise<void> {
    await this.d.exec(run('DELETE FROM prune_decision_holds WHERE preview_id = ? AND person = ?', [id, person]));
  }

  /**
   * One approval or rejection, in one transaction holding the preview row: the preview must still be pending and
   * unexpired, and the person must be neither its requester nor someone who decided before (any of their
   * identities); a rejection rejects, enough approvals approve (and name `executor`, the process that is to claim
   * the execution: recovery.ts picks the preview up if it never does). Ends the person's hold.
   */
  async decide(id: string, d: Decision, executor?: string): Promise<DecideResult<Doc>> {
    const lock = `SELECT * FROM prune_previews WHERE id = ?${this.d.forUpdate}`;
    const nowMs = Date.now();
    const person = d.person ?? `${d.issuer}#${d.subject}`;
    const r = await this.d.tx(function* (): Work<DecideResult<Doc>> {
      const row = ((yield all(lock, [id])) as SqlPreview[])[0];
      const decisions = (yield all('SELECT * FROM prune_approvals WHERE preview_id = ?', [id])) as SqlDecision[];
      // the decider's own hold is what let it this far: the other checks apply again
      const refused = refusalOf(row, decisions, [], d, nowMs);
      if (refused || !row) return { ok: false, ...(refused ?? { reason: 'not-found' as const }) };
      yield run(
        `INSERT INTO prune_approvals (preview_id, issuer, subject, name, person, decision, comment, time, evidence_seq)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [id, d.issuer, d.subject, d.name, person, d.decision, d.comment, d.time, d.evidenceSeq ?? null],
      );
      yield run('DELETE FROM prune_decision_holds WHERE preview_id = ? AND person = ?', [id, person]);
      const approvals = decisions.filter((x) => x.decision === 'approve').length + (d.decision === 'approve' ? 1 : 0);
      let next: PreviewStatus | undefined;
      if (d.decision === 'reject') next = 'rejected';
      else if (approvals >= Number(row.required_approvals)) next = 'approved';
      if (next) {
        yield run(
          "UPDATE prune_previews SET status = ?, updated_at = ?, executor = ? WHERE id = ? AND status = 'pending'",
          [next, d.time, next === 'approved' ? (executor ?? null) : row.executor, id],
        );
        yield run('DELETE FROM prune_decision_holds WHERE preview_id = ?', [id]);
      }
      const fresh = (yield all('SELECT * FROM prune_previews WHERE id = ?', [id])) as SqlPreview[];
      const [preview] = yield* withDecisions<Doc>(fresh);
      return { ok: true, preview: preview as PreviewRow<Doc>, decided: !!next };
    });
    if (r.ok) this.changed(id, r.preview.app);
    return r;
  }

  /** Moves a preview from one of `from` to `to`; false when it was in none of them (someone else moved it). */
  async transition(
    id: string,
    from: PreviewStatus[],
    to: PreviewStatus,
    reason: string | null,
    now: string,
  ): Promise<boolean> {
    const n = await this.d.exec(
      run(
        `UPDATE prune_previews SET status = ?, status_reason = ?, updated_at = ? WHERE id = ? AND status IN (${inList(from.length)})`,
        [to, reason, now, id, ...from],
      ),
    );
    if (n === 1) this.changed(id);
    return n === 1;
  }

  /**
   * Claims an approved preview for execution (approved → executing) and writes its journal, in one
   * transaction: exactly one claimant wins, across requests and BFF replicas; the others get false.
   */
  async claim(
    id: string,
    executor: string,
    entries: Array<Pick<JournalEntry, 'batch' | 'object' | 'uid' | 'resourceVersion'>>,
    now: string,
  ): Promise<boolean> {
    const ok = await this.d.tx(function* () {
      const n = (yield run(
        "UPDATE prune_previews SET status = 'executing', executor = ?, updated_at = ? WHERE id = ? AND status = 'approved'",
        [executor, now, id],
      )) as number;
      if (n !== 1) return false;
      let position = 0;
      for (const e of entries)
        yield run(
          `INSERT INTO prune_journal (preview_id, position, batch, object, uid, resource_version, state, detail, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, 'planned', NULL, ?)`,
          [id, position++, e.batch, e.object, e.uid, e.resourceVersion, now],
        );
      return true;
    });
    if (ok) this.changed(id);
    return ok;
  }

  async journal(id: string): Promise<JournalEntry[]> {
    const rows = (await this.d.exec(
      all('SELECT * FROM prune_journal WHERE preview_id = ? ORDER BY position', [id]),
    )) as SqlJournal[];
    return rows.map(toJournal);
  }

  /** One journal step, guarded by the state it leaves (each step is taken once). */
  async mark(
    id: string,
    position: number,
    from: JournalState[],
    to: JournalState,
    detail: string | null,
    now: string,
  ): Promise<boolean> {
    const n = await this.d.exec(
      run(
        `UPDATE prune_journal SET state = ?, detail = ?, updated_at = ? WHERE preview_id = ? AND position = ? AND state IN (${inList(from.length)})`,
        [to, detail, now, id, position, ...from],
      ),
    );
    if (n === 1) this.changed(id);
    return n === 1;
  }
}
