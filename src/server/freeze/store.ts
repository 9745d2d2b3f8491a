// Incident freezes in the evidence store's database (tables: migration 3 in evidence-store.ts).
//
// A freeze claims each app object it pauses (freeze_claims, primary key app): a second freeze of the same app,
// from this replica or another, fails to claim and is refused. Ending is a row transition guarded by the
// status (`active` → `ending`), so an unfreeze and the expiry timer (or two replicas) end a freeze once.
//
// The details (doc) change by compare-and-set on the row's version (migration 6): modify() reads the row,
// applies the change to that fresh copy and writes it only if no one wrote in between; a lost race reads again.
// So an extension and an out-of-band record made at once (here or on another replica) both stay.
//
// An end in progress holds a claim on the row (migration 7: claimed_by, claim_token, claimed_until): the process
// ending it renews claimed_until every few seconds (renewClaim) and names its token in every write it makes
// (`holder`: fencing), so once another replica has taken a dead end over (claimEnd), the old process can write
// nothing more. See claim.ts.
import type { LiveChange, PriorAutomation } from '../../domain/freeze.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import { HttpError } from '../http/errors.ts';
import { all, dialectOf, run, type Dialect } from '../store/dialect.ts';

export const FREEZE_STATUSES = ['active', 'ending', 'ended', 'failed'] as const;
export type FreezeStatus = (typeof FREEZE_STATUSES)[number];

export interface FreezeTarget {
  appId: string;
  kind: 'Kustomization' | 'HelmRelease' | 'Application';
  namespace: string;
  name: string;
  controller: 'flux' | 'argocd';
  env: string;
  prior: PriorAutomation;
  /** whether the freeze's patch was accepted by the apiserver */
  applied: boolean;
  /** an Application an ApplicationSet generates: the freeze changed the ApplicationSet (undone if the freeze fails) */
  appSetPaused?: boolean;
  /** the freeze paused some of the app's Rollouts (undone if the freeze fails) */
  rolloutsPaused?: boolean;
  /**
   * Flux only: the reconcile request the freeze patch carried, and when the controller was seen echoing it (it
   * handled the suspended object: no reconcile it began before is still applying). Unconfirmed, a live edit may
   * still be reverted (domain/freeze.ts pauseHandled).
   */
  controllerPause?: { requested: string; confirmed?: string | undefined } | undefined;
  /** set when the app object was found changed out of band (resumed directly, annotation dropped, deleted) */
  interference?: { state: string; at: string; message: string } | undefined;
  restored?: { at: string; ok: boolean; detail?: string } | undefined;
}

/** One app's write-back as the end decided it: what a takeover of a dead end redoes, exactly. */
export interface PlannedWriteBack {
  appId: string;
  branch: string;
  message: string;
  /** the on-call whose decision it is (the commit's author) */
  author: string;
  changes: LiveChange[];
}

export interface FreezeDoc {
  targets: FreezeTarget[];
  extensions: Array<{ at: string; by: string; reason: string; from: string; to: string }>;
  decisions?: Array<{ change: string; action: 'write-back' | 'git-wins' }>;
  writeBack?: Array<{
    appId: string;
    branch: string;
    commit: string | null;
    pullRequest?: { number: number; url: string } | undefined;
    placements: unknown[];
    error?: string | undefined;
    /** the branch was pushed but the forge did not open the pull request (why) */
    forgeError?: string | undefined;
    /** the changes it carried, with their live values (a later attempt of the end with the same ones reuses it) */
    written?: Array<{ id: string; live: unknown }> | undefined;
  }>;
  /** the start of the freeze as the live changes count it (set when the patches were accepted) */
  startedAt: string;
  /** the end in progress (or the last one tried), written with its claim: how, by whom, and its write-backs */
  ending?:
    | {
        /** 1 for the first end tried; a later one writes back on branches suffixed `-<attempt>` */
        attempt: number;
        how: string;
        by: string;
        at: string;
        writeBack: PlannedWriteBack[];
      }
    | undefined;
  /** a takeover could not complete the write-back: the end waits for on-call (automation NOT restored) */
  stall?: { at: string; by: string; reason: string } | undefined;
}

/** The claim of an end in progress: who holds it, its fencing token, and until when it holds unless renewed. */
export interface FreezeClaim {
  by: string;
  token: string;
  until: string;
}

export interface FreezeRow {
  id: string;
  cluster: string;
  env: string | null;
  app: string | null;
  status: FreezeStatus;
  reason: string;
  incident: string | null;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  updatedAt: string;
  endedAt: string | null;
  endedBy: string | null;
  endReason: string | null;
  doc: FreezeDoc;
  /** bumped by every write of the row: what a compare-and-set of the details expects */
  version: number;
  /** the end's claim (status `ending`): its holder, fencing token and expiry; null when none holds it */
  claimedBy?: string | null;
  claimToken?: string | null;
  claimedUntil?: string | null;
}

/** A change of a freeze's details: the whole new doc (computed from the row just read), and maybe a new expiry. */
export interface FreezeChange {
  doc: FreezeDoc;
  expiresAt?: string | undefined;
  /** the end's reason column (e.g. why an end stalled) */
  endReason?: string | null | undefined;
  /** the claim columns set (a claim released: token and until null) */
  claim?: { by: string | null; token: string | null; until: string | null } | undefined;
}

/** Whose write this is, for writes of an end in progress: only the claim's current holder may write (fencing). */
export interface Fence {
  holder?: string | undefined;
}

/** how many lost races modify() takes (each one reads the row again) before it gives up */
const MODIFY_ATTEMPTS = 25;

interface SqlFreeze {
  id: string;
  cluster: string;
  env: string | null;
  app: string | null;
  status: string;
  reason: string;
  incident: string | null;
  created_by: string;
  created_at: string;
  expires_at: string;
  updated_at: string;
  ended_at: string | null;
  ended_by: string | null;
  end_reason: string | null;
  doc: string;
  version: number | string | null;
  claimed_by?: string | null;
  claim_token?: string | null;
  claimed_until?: string | null;
}

const toRow = (r: SqlFreeze): FreezeRow => ({
  id: r.id,
  cluster: r.cluster,
  env: r.env,
  app: r.app,
  status: r.status as FreezeStatus,
  reason: r.reason,
  incident: r.incident,
  createdBy: r.created_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  updatedAt: r.updated_at,
  endedAt: r.ended_at,
  endedBy: r.ended_by,
  endReason: r.end_reason,
  doc: JSON.parse(r.doc) as FreezeDoc,
  version: Number(r.version ?? 0),
  claimedBy: r.claimed_by ?? null,
  claimToken: r.claim_token ?? null,
  claimedUntil: r.claimed_until ?? null,
});

export class FreezeStore {
  private readonly d: Dialect;
  /** told after every committed change of a freeze (the state bus: every replica's streams and expiry timers) */
  onChange: ((id: string, app?: string) => void) | undefined;
  private changed(id: string, app?: string | null): void {
    try {
      this.onChange?.(id, app ?? undefined);
    } catch {
      /* a listener never fails a committed write */
    }
  }

  constructor(store: EvidenceStore) {
    this.d = dialectOf(store);
  }

  /**
   * Writes the freeze and claims its apps in one transaction. Returns the app ids already claimed by
   * another freeze (nothing written then).
   */
  async create(f: Omit<FreezeRow, 'endedAt' | 'endedBy' | 'endReason' | 'updatedAt' | 'version'>): Promise<{
    ok: boolean;
    taken: Array<{ app: string; freezeId: string }>;
  }> {
    const apps = f.doc.targets.map((t) => t.appId);
    const r = await this.d.tx(function* () {
      const taken = (
        (yield all(
          `SELECT app, freeze_id FROM freeze_claims WHERE app IN (${apps.map(() => '?').join(', ')})`,
          apps,
        )) as Array<{ app: string; freeze_id: string }>
      ).map((r) => ({ app: r.app, freezeId: r.freeze_id }));
      if (taken.length) return { ok: false, taken };
      yield run(
        `INSERT INTO freezes (id, cluster, env, app, status, reason, incident, created_by, created_at, expires_at,
           updated_at, ended_at, ended_by, end_reason, doc)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?)`,
        [
          f.id,
          f.cluster,
          f.env,
          f.app,
          f.status,
          f.reason,
          f.incident,
          f.createdBy,
          f.createdAt,
          f.expiresAt,
          f.createdAt,
          JSON.stringify(f.doc),
        ],
      );
      for (const a of apps) yield run('INSERT INTO freeze_claims (app, freeze_id) VALUES (?, ?)', [a, f.id]);
      return { ok: true, taken: [] };
    });
    if (r.ok) this.changed(f.id, f.app);
    return r;
  }

  async get(id: string): Promise<FreezeRow | undefined> {
    const rows = (await this.d.exec(all('SELECT * FROM freezes WHERE id = ?', [id]))) as SqlFreeze[];
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  /** Newest first; `active` = still holding its apps (active or ending). */
  async list(opts: { active?: boolean; limit?: number } = {}): Promise<FreezeRow[]> {
    const rows = (await this.d.exec(
      all(
        `SELECT * FROM freezes ${opts.active ? "WHERE status IN ('active', 'ending')" : ''} ORDER BY created_at DESC LIMIT ?`,
        [opts.limit ?? 200],
      ),
    )) as SqlFreeze[];
    return rows.map(toRow);
  }

  /**
   * Freezes in force at some time in [from, to): begun before `to`, and ended (or, still holding, expiring) at or
   * after `from`; newest first, at most `limit` (an environment's calendar).
   */
  async overlapping(from: string, to: string, limit: number): Promise<FreezeRow[]> {
    const rows = (await this.d.exec(
      all(
        `SELECT * FROM freezes WHERE created_at < ? AND COALESCE(ended_at, expires_at) >= ?
         ORDER BY created_at DESC LIMIT ?`,
        [to, from, limit],
      ),
    )) as SqlFreeze[];
    return rows.map(toRow);
  }

  /** Freezes still holding their apps (active or ending), for the metrics. */
  async countActive(): Promise<number> {
    const rows = (await this.d.exec(
      all("SELECT COUNT(*) AS n FROM freezes WHERE status IN ('active', 'ending')"),
    )) as Array<{ n: number | string }>;
    return Number(rows[0]?.n ?? 0);
  }

  /** Every claim: app id → freeze id. */
  async claims(): Promise<Map<string, string>> {
    const rows = (await this.d.exec(all('SELECT app, freeze_id FROM freeze_claims', []))) as Array<{
      app: string;
      freeze_id: string;
    }>;
    return new Map(rows.map((r) => [r.app, r.freeze_id]));
  }

  /** The freeze holding an app, if any. */
  async claimOf(app: string): Promise<string | undefined> {
    const rows = (await this.d.exec(all('SELECT freeze_id FROM freeze_claims WHERE app = ?', [app]))) as Array<{
      freeze_id: string;
    }>;
    return rows[0]?.freeze_id;
  }

  /**
   * Changes a freeze's details on fresh data: `change` is given the row as stored now (a copy it may alter) and
   * returns the new doc (and expiry), or undefined to leave the row as it is. The write is a compare-and-set on
   * the row's version: when another write came in between (this replica or another), the row is read again and
   * `change` runs again on it — so it must be a pure function of the row it is given. Undefined when the freeze
   * is gone or not in `expect` status (then nothing is written).
   */
  async modify(
    id: string,
    expect: FreezeStatus,
    change: (row: FreezeRow) => FreezeChange | undefined,
    fence: Fence = {},
  ): Promise<{ row: FreezeRow; changed: boolean } | undefined> {
    for (let attempt = 0; attempt < MODIFY_ATTEMPTS; attempt++) {
      // after a lost race, a short random pause: writers that collided do not collide again in step
      if (attempt) await new Promise((r) => setTimeout(r, Math.random() * Math.min(20, 2 ** attempt)));
      const row = await this.get(id);
      if (!row || row.status !== expect) return undefined;
      if (fence.holder !== undefined && row.claimToken !== fence.holder) return undefined;
      const next = change(structuredClone(row));
      if (!next) return { row, changed: false };
      const updatedAt = new Date().toISOString();
      if (await this.write(id, expect, next, row.version, updatedAt, fence.holder))
        return {
          row: {
            ...row,
            doc: next.doc,
            expiresAt: next.expiresAt ?? row.expiresAt,
            updatedAt,
            version: row.version + 1,
            ...(next.endReason !== undefined ? { endReason: next.endReason } : {}),
            ...(next.claim
              ? { claimedBy: next.claim.by, claimToken: next.claim.token, claimedUntil: next.claim.until }
              : {}),
          },
          changed: true,
        };
    }
    throw new HttpError(409, 'Conflict', `freeze ${id} is being changed by others: try again`);
  }

  /**
   * Replaces the doc (and optionally the expiry) of a freeze in `expect` status; false when it is not, or when
   * `version` is given and the row was written since that version was read. A whole doc computed from an
   * earlier read erases what others wrote meanwhile: a writer that can race another uses modify().
   */
  async update(
    id: string,
    expect: FreezeStatus,
    change: FreezeChange & { version?: number },
    fence: Fence = {},
  ): Promise<boolean> {
    return this.write(id, expect, change, change.version, new Date().toISOString(), fence.holder);
  }

  private async write(
    id: string,
    expect: FreezeStatus,
    change: FreezeChange,
    version: number | undefined,
    now: string,
    holder?: string,
  ): Promise<boolean> {
    const endReason = change.endReason !== undefined;
    const n = (await this.d.exec(
      run(
        `UPDATE freezes SET doc = ?, updated_at = ?, version = version + 1${change.expiresAt ? ', expires_at = ?' : ''}${endReason ? ', end_reason = ?' : ''}${change.claim ? ', claimed_by = ?, claim_token = ?, claimed_until = ?' : ''}
         WHERE id = ? AND status = ?${version === undefined ? '' : ' AND version = ?'}${holder === undefined ? '' : ' AND claim_token = ?'}`,
        [
          JSON.stringify(change.doc),
          now,
          ...(change.expiresAt ? [change.expiresAt] : []),
          ...(endReason ? [change.endReason ?? null] : []),
          ...(change.claim ? [change.claim.by, change.claim.token, change.claim.until] : []),
          id,
          expect,
          ...(version === undefined ? [] : [version]),
          ...(holder === undefined ? [] : [holder]),
        ],
      ),
    )) as number;
    if (n === 1) this.changed(id);
    return n === 1;
  }

  /**
   * `from` → `to` exactly once (whoever changes the row does the work). `expect.expiresAt`: only while the
   * expiry is still that one (an extension committed meanwhile wins over an expiry); `expiresAt`: a new one
   * (a failed expiry's retry time, which every replica's timer then follows). `claim`: the end's claim taken
   * with the transition (to `ending`); `holder`: only while that token holds the claim (fencing). Leaving
   * `ending` drops the claim (claimed_by keeps naming its last holder).
   */
  async transition(
    id: string,
    from: FreezeStatus,
    to: FreezeStatus,
    end?: { by: string; reason: string },
    opts: { expect?: { expiresAt: string }; expiresAt?: string; claim?: FreezeClaim; holder?: string } = {},
  ): Promise<boolean> {
    const now = new Date().toISOString();
    const finished = to === 'ended' || to === 'failed';
    // leaving `ending`, the claim is dropped (its last holder stays named)
    const claim = opts.claim
      ? [opts.claim.by, opts.claim.token, opts.claim.until]
      : to !== 'ending'
        ? [null, null]
        : undefined;
    const ok = await this.d.tx(function* () {
      const n = (yield run(
        `UPDATE freezes SET status = ?, updated_at = ?, version = version + 1${end ? ', ended_by = ?, end_reason = ?' : ''}${finished ? ', ended_at = ?' : ''}${opts.expiresAt ? ', expires_at = ?' : ''}${claim ? `${opts.claim ? ', claimed_by = ?' : ''}, claim_token = ?, claimed_until = ?` : ''}
         WHERE id = ? AND status = ?${opts.expect ? ' AND expires_at = ?' : ''}${opts.holder !== undefined ? ' AND claim_token = ?' : ''}`,
        [
          to,
          now,
          ...(end ? [end.by, end.reason] : []),
          ...(finished ? [now] : []),
          ...(opts.expiresAt ? [opts.expiresAt] : []),
          ...(claim ?? []),
          id,
          from,
          ...(opts.expect ? [opts.expect.expiresAt] : []),
          ...(opts.holder !== undefined ? [opts.holder] : []),
        ],
      )) as number;
      if (n === 1 && finished) yield run('DELETE FROM freeze_claims WHERE freeze_id = ?', [id]);
      return n === 1;
    });
    if (ok) this.changed(id);
    return ok;
  }

  /**
   * Takes the end of a freeze: status `from` → `ending` with `claim`, only while the row is still at the version
   * read and its claim is still the one read (token and expiry; none for a freeze not ending yet, or an end left
   * unclaimed). `doc`: the details written with it (computed from that same row). False when anything changed.
   * The end's reason (a stall's) is cleared.
   */
  async claimEnd(
    id: string,
    from: FreezeStatus,
    seen: Pick<FreezeRow, 'version' | 'claimToken' | 'claimedUntil'>,
    claim: FreezeClaim,
    doc?: FreezeDoc,
  ): Promise<boolean> {
    const n = (await this.d.exec(
      run(
        `UPDATE freezes SET status = 'ending', updated_at = ?, version = version + 1, claimed_by = ?, claim_token = ?,
           claimed_until = ?, end_reason = NULL${doc ? ', doc = ?' : ''}
         WHERE id = ? AND status = ? AND version = ? AND COALESCE(claim_token, '') = ? AND COALESCE(claimed_until, '') = ?`,
        [
          new Date().toISOString(),
          claim.by,
          claim.token,
          claim.until,
          ...(doc ? [JSON.stringify(doc)] : []),
          id,
          from,
          seen.version,
          seen.claimToken ?? '',
          seen.claimedUntil ?? '',
        ],
      ),
    )) as number;
    if (n === 1) this.changed(id);
    return n === 1;
  }

  /**
   * The heartbeat of an end: its claim renewed until `until`, while `token` still holds it. Not a change of the
   * freeze (no version, no notification); false when the claim was taken over (or the end is over).
   */
  async renewClaim(id: string, token: string, until: string): Promise<boolean> {
    const n = (await this.d.exec(
      run("UPDATE freezes SET claimed_until = ? WHERE id = ? AND status = 'ending' AND claim_token = ?", [
        until,
        id,
        token,
      ]),
    )) as number;
    return n === 1;
  }
}
