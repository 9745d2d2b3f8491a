/** Evidence events: append-only, hash-chained. Pure helpers (hashing is injected). */

export const EVIDENCE_TYPES = [
  'console.started',
  'cluster.connected',
  'cluster.lost',
  'app.revision-observed',
  'app.health-changed',
  // an app's environment flagged (its label disagrees with the console's mapping, or no rule decides it): once
  'app.env-conflict',
  'access.denied',
  'auth.signed-in',
  'auth.signed-out',
  'auth.failed',
  'auth.password-changed',
  'app.reconcile-requested',
  'freeze.started',
  'freeze.ended',
  'freeze.extended',
  'freeze.expired',
  'freeze.write-back',
  'freeze.restored',
  // a frozen app object changed out of band: resumed directly, its freeze annotations dropped, deleted
  'freeze.interfered',
  // a freeze ends within 15 minutes (notifications.ts): once per freeze and expiry, where notifications are sent
  'freeze.ending-soon',
  // planned freeze windows (issue 43): made and deleted (intent first, data.window), and each occurrence started
  // once by the replica holding the Lease (its freezes are ordinary freeze.started records naming the window)
  'window.created',
  'window.deleted',
  'window.started',
  // an occurrence starts within the hour (notifications.ts): once per occurrence, cluster and environment
  'window.starting-soon',
  // break-glass through a window in force (decision 0026): asked and approved by two people (intents first), and
  // its end (frozen again after its minutes, or lapsed unapproved)
  'breakglass.requested',
  'breakglass.approved',
  'breakglass.ended',
  'prune.requested',
  'prune.approved',
  'prune.executed',
  'prune.rejected',
  'prune.voided',
  // one batch of an approved prune, and each object's delete (intent first, outcome after)
  'prune.batch',
  'prune.delete',
  // the approval stamped on an object the controller itself prunes, and Argo CD's deletion-approved (Prune=confirm)
  'prune.stamp',
  'prune.deletion-approved',
  // an approved prune whose execution never started (the request that completed it stopped first), resumed
  'prune.resumed',
  // a delete whose answer never came (the prune failed with it unknown), read again later: deleted or not
  'prune.settled',
  'drift.detected',
  'drift.reverted',
  'drift.adopted',
  'app.rendered',
  // the states of a release (domain/release.ts), recorded by the release recorder for every app
  'release.change',
  'release.artifact',
  'release.render',
  'release.reconcile',
  'release.health',
  'release.verification',
  'release.review',
  'release.validation',
  'release.promotion',
  /** a step an app's canary reached while a release was followed (not one of the nine states) */
  'release.canary',
  /** a Secret whose values Git holds in plaintext (data: file, secret, keys — never a value), found by a render */
  'secret.plaintext-in-git',
  // the recorder was not recording for a while (the console was down): releases in that window are not recorded
  'release.gap',
  // manifests whose render was last used longer ago than CONSOLE_MANIFEST_RETENTION_DAYS, expired (intent first:
  // data.renderHashes; the outcome names those expired): their hashes stay in the chain, their bodies go
  'release.manifests-expired',
  // a rollback pull request to an earlier release (intent; the outcome names the pull request)
  'release.rollback-requested',
  // an Argo Rollouts canary promoted, aborted, retried, paused or resumed through the console (intent; data.verb)
  'rollout.control',
  // the outcome of an action whose intent was recorded first (data.intentSeq names it)
  'action.completed',
  'action.failed',
  // the process acting stopped (a crash, a kill) after the intent and before its outcome: whether the action took
  // effect is unknown (data.intentSeq, data.action, data.replica); recorded by the replica that found it
  'action.interrupted',
  // what an interrupted action really did, recorded by the process that acted once it reached the store again (data:
  // intentSeq, outcome: action.completed or action.failed): a note after the one outcome, never a second outcome
  'action.resolved',
  // an attempt at a governed action refused by a check before its intent (data.action, data.reason): one record,
  // never the action's own type
  'action.refused',
  // an admin's retry of an event sink's dead letter (intent: data.sink, data.seq; the outcome follows)
  'sink.redelivery',
  // sandbox mode only: a "Try it" scenario run and a reset of the sandbox to its seed (intent; the outcome follows)
  'sandbox.scenario',
  'sandbox.reset',
] as const;
export type EvidenceType = (typeof EVIDENCE_TYPES)[number];

export interface EvidenceInput {
  time: string;
  type: EvidenceType;
  actor: string;
  app?: string | null;
  cluster?: string | null;
  env?: string | null;
  data: Record<string, unknown>;
}

export interface EvidenceEvent extends EvidenceInput {
  seq: number;
  prevHash: string;
  hash: string;
}

export const GENESIS_HASH = '0'.repeat(64);

/** Deterministic JSON: object keys sorted, no whitespace, undefined dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('non-finite number in evidence');
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** The text that is hashed: prevHash followed by the canonical JSON of the event without its hash. */
export function chainText(e: Omit<EvidenceEvent, 'hash'>): string {
  const body = {
    seq: e.seq,
    time: e.time,
    type: e.type,
    actor: e.actor,
    app: e.app ?? null,
    cluster: e.cluster ?? null,
    env: e.env ?? null,
    data: e.data,
    prevHash: e.prevHash,
  };
  return e.prevHash + canonicalJson(body);
}

export type VerifyResult =
  | { ok: true; count: number; head: string; /** signed checkpoints checked */ checkpoints?: number }
  | {
      ok: false;
      count: number;
      brokenAt: number;
      reason: string;
      /** the first signed checkpoint that no longer matches the store */
      checkpoint?: { seq: number; time: string };
    };

/** Walks events in seq order and reports the first broken link. */
export function verifyChain(
  events: Iterable<EvidenceEvent>,
  sha256: (s: string) => string,
  head?: { seq: number; hash: string },
): VerifyResult {
  const v = new ChainVerifier(sha256);
  for (const e of events) {
    const broken = v.push(e);
    if (broken) return broken;
  }
  return v.finish(head);
}

/**
 * The chain checked one event at a time (a store streams its rows through it: memory stays flat in the chain's
 * length). `push` answers the first broken link; `finish` checks the end against the recorded head.
 */
export class ChainVerifier {
  private prev = GENESIS_HASH;
  private expectSeq = 1;
  count = 0;

  constructor(private readonly sha256: (s: string) => string) {}

  push(e: EvidenceEvent): VerifyResult | undefined {
    const count = this.count;
    if (e.seq !== this.expectSeq)
      return {
        ok: false,
        count,
        brokenAt: this.expectSeq,
        reason: `event ${this.expectSeq} is missing (next stored is ${e.seq})`,
      };
    if (e.prevHash !== this.prev)
      return {
        ok: false,
        count,
        brokenAt: e.seq,
        reason: `event ${e.seq} does not link to the hash of event ${e.seq - 1}`,
      };
    if (this.sha256(chainText(e)) !== e.hash)
      return { ok: false, count, brokenAt: e.seq, reason: `event ${e.seq} content does not match its hash` };
    this.prev = e.hash;
    this.expectSeq++;
    this.count++;
    return undefined;
  }

  finish(head?: { seq: number; hash: string }): VerifyResult {
    const count = this.count;
    if (head && (head.seq !== count || head.hash !== this.prev))
      return {
        ok: false,
        count,
        brokenAt: Math.min(head.seq, count + 1),
        reason: `the chain ends at event ${count} but the recorded head is event ${head.seq}: events were removed from the end`,
      };
    return { ok: true, count, head: this.prev };
  }
}
