// Prune previews, their approvals and the intent journal of their execution, in the evidence store's
// database (tables: migration 2 in evidence-store.ts). Both dialects, one repository.
//
// State changes are row transitions guarded by the current state (`UPDATE … WHERE status = 'approved'`):
// whoever changes the row runs the prune, so concurrent approvals and several BFF replicas execute a
// preview at most once. One decision per identity per preview (primary key issuer + subject).
import type { PRUNE_PREVIEW_STATUSES } from '../../api/schemas.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import { all, dialectOf, run, type Dialect, type Work } from '../store/dialect.ts';

export type PreviewStatus = (typeof PRUNE_PREVIEW_STATUSES)[number];

export interface Identity {
  /** who issued the identity: 'console' for local accounts, the OIDC issuer otherwise */
  issuer: string;
  subject: string;
  /** the console's name for the person */
  name: string;
}

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

export type DecideResult<Doc> =
  | {
      ok: true;
      preview: PreviewRow<Doc>;
      /** this decision moved the preview to approved or rejected */ decided: boolean;
    }
  | { ok: false; reason: 'not-found' | 'not-pending' | 'already-decided'; status?: PreviewStatus };

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

const toDecision = (r: SqlDecision): Decision => ({
  issuer: r.issuer,
  subject: r.subject,
  name: r.name,
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
    requester: { name: r.requester_name, issuer: r.requester_issuer, subject: r.requester_subject },
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
          requester_name, requester_issuer, requester_subject, created_at, expires_at, updated_at, executor, doc)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
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
   * One approval or rejection, in one transaction holding the preview row: the preview must still be pending
   * and the identity must not have decided before; a rejection rejects, enough approvals approve.
   */
  async decide(id: string, d: Decision): Promise<DecideResult<Doc>> {
    const lock = `SELECT * FROM prune_previews WHERE id = ?${this.d.forUpdate}`;
    const r = await this.d.tx(function* (): Work<DecideResult<Doc>> {
      const row = ((yield all(lock, [id])) as SqlPreview[])[0];
      if (!row) return { ok: false, reason: 'not-found' };
      if (row.status !== 'pending') return { ok: false, reason: 'not-pending', status: row.status as PreviewStatus };
      const prior = (yield all('SELECT * FROM prune_approvals WHERE preview_id = ? AND issuer = ? AND subject = ?', [
        id,
        d.issuer,
        d.subject,
      ])) as SqlDecision[];
      if (prior.length) return { ok: false, reason: 'already-decided' };
      yield run(
        `INSERT INTO prune_approvals (preview_id, issuer, subject, name, decision, comment, time, evidence_seq)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [id, d.issuer, d.subject, d.name, d.decision, d.comment, d.time, d.evidenceSeq ?? null],
      );
      const approvals = (
        (yield all("SELECT COUNT(*) AS n FROM prune_approvals WHERE preview_id = ? AND decision = 'approve'", [
          id,
        ])) as Array<{ n: number | string }>
      )[0];
      let next: PreviewStatus | undefined;
      if (d.decision === 'reject') next = 'rejected';
      else if (Number(approvals?.n ?? 0) >= Number(row.required_approvals)) next = 'approved';
      if (next)
        yield run("UPDATE prune_previews SET status = ?, updated_at = ? WHERE id = ? AND status = 'pending'", [
          next,
          d.time,
          id,
        ]);
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
