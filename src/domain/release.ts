// A release of one app in one environment: the states it goes through from a commit to a verified, running
// workload (issue 16), the evidence type that records each, and the timeline built from that evidence.
// The recorder's other pure rules are beside it: release-commit.ts (revisions, `git show`, review),
// release-images.ts (images, live digests, promotion), release-verification.ts, release-not-live.ts (the route's
// "merged, but not live — why?"). The recorder is server/releases/recorder.ts.
import type { Obj } from './object-meta.ts';

export const RELEASE_STATES = [
  'change',
  'review',
  'artifact',
  'render',
  'validation',
  'reconcile',
  'health',
  'verification',
  'promotion',
] as const;
export type ReleaseStateName = (typeof RELEASE_STATES)[number];

/** The evidence type that records each state. */
export const RELEASE_EVIDENCE: Partial<Record<ReleaseStateName, string>> = {
  change: 'release.change',
  review: 'release.review',
  artifact: 'release.artifact',
  render: 'release.render',
  validation: 'release.validation',
  reconcile: 'release.reconcile',
  health: 'release.health',
  verification: 'release.verification',
  promotion: 'release.promotion',
};
/** a step of a release's canary (not a state: the verification state is the canary's outcome) */
export const RELEASE_CANARY = 'release.canary';
/** a window in which the recorder did not record (not a state of one release) */
export const RELEASE_GAP = 'release.gap';
export const RELEASE_EVIDENCE_TYPES = Object.values(RELEASE_EVIDENCE) as string[];

export const stateOfType = (type: string): ReleaseStateName | undefined =>
  (Object.entries(RELEASE_EVIDENCE).find(([, t]) => t === type)?.[0] as ReleaseStateName | undefined) ?? undefined;

/** held: the controller's prune waits for an approved preview (domain/prune-hold.ts) — its own status, not failed */
export type StateStatus = 'ok' | 'failed' | 'unknown' | 'pending' | 'held';

// ---- the timeline ------------------------------------------------------------------------------------------

export interface ReleaseEvent {
  seq: number;
  time: string;
  type: string;
  actor: string;
  data: Record<string, unknown>;
}

export interface ReleaseStateView {
  name: ReleaseStateName;
  /** 1–9 */
  step: number;
  status: StateStatus;
  /** one line: the value of the state (short sha, digest, render hash…) */
  value?: string;
  /** why it failed, is unknown or is still pending */
  why?: string;
  time?: string;
  actor?: string;
  /** the evidence record (the newest one of this state) */
  seq?: number;
  data?: Record<string, unknown>;
}

/** A step the release's canary reached (a `release.canary` record), oldest first. */
export interface CanaryStepView {
  seq: number;
  time: string;
  /** `Rollout ns/name` or `Canary ns/name` */
  rollout: string;
  state: string;
  step: number | null;
  steps: number;
  weight: number;
  phase: string;
  reason: string;
}

export interface ReleaseView {
  sha: string;
  revision: string;
  firstSeen: string;
  states: ReleaseStateView[];
  /** its canary, step by step (an app with an Argo Rollout or a Flagger Canary) */
  canary?: CanaryStepView[];
  /** the first state that did not complete, and why (set on the newest release only) */
  blocked?: { state: ReleaseStateName; why: string };
  /** its render is this running release's: no change here, not a release of this app (release-effect.ts) */
  unchangedFrom?: string;
}

/** "1 object", "3 objects", "? objects" */
const plural = (n: number, word: string) => (Number.isFinite(n) ? `${n} ${word}${n === 1 ? '' : 's'}` : `? ${word}s`);
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

function recordedState(name: ReleaseStateName, e: ReleaseEvent): ReleaseStateView {
  const d = e.data;
  const status: StateStatus =
    d.status === 'failed' ? 'failed' : d.status === 'unknown' ? 'unknown' : d.status === 'held' ? 'held' : 'ok';
  const base = {
    name,
    step: RELEASE_STATES.indexOf(name) + 1,
    status,
    time: e.time,
    actor: e.actor,
    seq: e.seq,
    data: d,
  };
  const why = str(d.reason);
  let value: string | undefined;
  let actor = e.actor;
  switch (name) {
    case 'change': {
      const a = asObj(d.author);
      actor = str(a.name) ?? actor;
      value = str(d.subject) ?? str(d.sha)?.slice(0, 7);
      // Flux image automation: confirmed by its controller, or only claimed by the author line
      const auto = asObj(d.automation);
      if (auto.confirmed === true && str(auto.automation)) {
        actor = `image automation ${String(auto.automation)}`;
        value = str(auto.line) ?? value;
      } else if (auto.confirmed === false && str(auto.line)) value = `${value ?? ''} · ${String(auto.line)}`;
      // the controller applied it together with commits it never applied on their own (a busy repository)
      const b = asObj(d.between);
      if (typeof b.count === 'number' && b.count > 0 && str(b.from))
        value = `${value ?? ''} · with ${plural(b.count, 'earlier commit')} since ${String(b.from).slice(0, 7)}, applied together`;
      break;
    }
    case 'artifact': {
      const imgs = Array.isArray(d.images) ? (d.images as Obj[]) : [];
      const mutable = imgs.filter((i) => i.mutable).length;
      value = [
        str(d.artifactDigest),
        imgs.length ? `${imgs.length} image(s)${mutable ? `, ${mutable} mutable tag(s)` : ''}` : undefined,
      ]
        .filter(Boolean)
        .join(' · ');
      break;
    }
    case 'render':
      value = str(d.renderHash)
        ? `${String(d.renderHash)
            .replace(/^sha256:/, '')
            .slice(0, 12)} · ${plural(Number(d.objects ?? NaN), 'object')}`
        : undefined;
      if (value && d.effect === 'unchanged' && str(d.sameAs))
        value += ` · no change here (as ${String(d.sameAs).slice(0, 7)})`;
      break;
    case 'reconcile':
      value = str(d.appliedRevision) ?? str(d.attemptedRevision);
      if (typeof d.secondsAfterCommit === 'number')
        value = `${value ?? ''} · ${Math.round(d.secondsAfterCommit)} s after the commit`;
      {
        // Flux held it for a dependency first (server/releases/record-reconcile.ts)
        const w = asObj(d.waited);
        const on = Array.isArray(w.on) ? (w.on as unknown[]).map((x) => String(x).split('/').pop()) : [];
        if (on.length)
          value = `${value ?? ''} · waited${typeof w.seconds === 'number' ? ` ${Math.round(w.seconds)} s` : ''} on ${on.join(', ')}`;
      }
      break;
    case 'health':
      value = str(d.health);
      break;
    case 'review': {
      const pr = asObj(d.pullRequest);
      const approvers = Array.isArray(d.approvers) ? (d.approvers as unknown[]).map(String) : [];
      value =
        typeof pr.number === 'number'
          ? `PR #${pr.number}${approvers.length ? ` approved by ${approvers.join(', ')}` : ' (no approval)'}`
          : d.directPush
            ? 'direct push (no pull request, no merge commit)'
            : d.merge
              ? `merge commit${approvers.length ? `, reviewed by ${approvers.join(', ')}` : ''}`
              : undefined;
      if (typeof pr.mergedBy === 'string') actor = pr.mergedBy;
      break;
    }
    case 'validation':
      value =
        typeof d.accepted === 'number'
          ? `${d.accepted} accepted · ${typeof d.rejected === 'number' ? d.rejected : 0} rejected`
          : undefined;
      break;
    case 'promotion':
      value = str(d.toEnv)
        ? `reached ${String(d.toEnv)}${typeof d.secondsAfter === 'number' ? ` ${Math.round(d.secondsAfter)} s later` : ''}`
        : undefined;
      break;
    case 'verification': {
      const http = asObj(d.http);
      const live = asObj(d.live);
      value = [
        typeof http.status === 'number' ? `HTTP ${http.status} in ${String(http.latencyMs)} ms` : undefined,
        typeof live.pods === 'number' ? `${live.pods} pod(s)` : undefined,
      ]
        .filter(Boolean)
        .join(' · ');
      break;
    }
    default:
      break;
  }
  return { ...base, actor, ...(value ? { value } : {}), ...(status !== 'ok' && why ? { why } : {}) };
}

/**
 * Release rows, newest first, from the app's release evidence (any order). The newest record of each state of
 * a release wins. States not recorded are pending (with why), or unknown when a newer release superseded them.
 */
export function buildReleases(events: ReleaseEvent[], now = new Date().toISOString()): ReleaseView[] {
  const bySha = new Map<
    string,
    { revision: string; firstSeen: string; firstSeq: number; got: Map<ReleaseStateName, ReleaseEvent> }
  >();
  const canary = new Map<string, CanaryStepView[]>();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    const sha = str(e.data.sha);
    if (e.type === RELEASE_CANARY && sha) {
      const d = e.data;
      const list = canary.get(sha) ?? [];
      list.push({
        seq: e.seq,
        time: e.time,
        rollout: str(d.rollout) ?? '?',
        state: str(d.state) ?? '?',
        step: typeof d.step === 'number' ? d.step : null,
        steps: typeof d.steps === 'number' ? d.steps : 0,
        weight: typeof d.weight === 'number' ? d.weight : 0,
        phase: str(d.phase) ?? '?',
        reason: str(d.reason) ?? '',
      });
      canary.set(sha, list);
      continue;
    }
    const name = stateOfType(e.type);
    if (!name || !sha) continue;
    let r = bySha.get(sha);
    if (!r)
      bySha.set(
        sha,
        (r = { revision: str(e.data.revision) ?? sha, firstSeen: e.time, firstSeq: e.seq, got: new Map() }),
      );
    r.got.set(name, e);
  }
  const ordered = [...bySha.entries()].sort((a, b) => b[1].firstSeq - a[1].firstSeq);
  // the release still followed: the newest, or the one every newer commit renders as (they changed nothing here,
  // so what runs is it, and the recorder goes on recording its states: recorder.ts followCarried)
  const sameAs = (r: (typeof ordered)[number][1]) => {
    const d = r.got.get('render')?.data;
    return d?.effect === 'unchanged' ? str(d.sameAs) : undefined;
  };
  let followed = 0;
  const running = ordered[0] && sameAs(ordered[0][1]);
  if (running) {
    let k = 0;
    while (ordered[k] && sameAs((ordered[k] as (typeof ordered)[number])[1]) === running) k++;
    if (ordered[k]?.[0] === running) followed = k;
  }
  return ordered.map(([sha, r], i) => {
    const newest = i === 0;
    const stillFollowed = i === followed;
    const states = RELEASE_STATES.map((name): ReleaseStateView => {
      const step = RELEASE_STATES.indexOf(name) + 1;
      const e = r.got.get(name);
      if (e) return recordedState(name, e);
      // promotion happens after a newer release of this environment may have started: pending on every row
      if (name === 'promotion')
        return { name, step, status: 'pending', why: 'the next environment does not run these digests (yet)' };
      if (!newest && !stillFollowed)
        return { name, step, status: 'unknown', why: 'never reached: a newer revision superseded this one' };
      return { name, step, status: 'pending', why: pendingWhy(name, r.got) };
    });
    const steps = canary.get(sha);
    const render = r.got.get('render')?.data;
    const sameAs = render?.effect === 'unchanged' ? str(render.sameAs) : undefined;
    const view: ReleaseView = {
      sha,
      revision: r.revision,
      firstSeen: r.firstSeen,
      states,
      ...(steps?.length ? { canary: steps } : {}),
      ...(sameAs ? { unchangedFrom: sameAs } : {}),
    };
    if (newest) {
      const b = firstIncomplete(states);
      if (b) view.blocked = b;
    }
    void now;
    return view;
  });
}

function pendingWhy(name: ReleaseStateName, got: Map<ReleaseStateName, ReleaseEvent>): string {
  switch (name) {
    case 'change':
      return 'reading the commit from Git';
    case 'review':
      return got.has('change') ? 'reading how the commit reached the branch' : 'waits for the commit';
    case 'validation':
      return got.has('render') ? 'server-side dry-run of the render' : 'waits for the render';
    case 'artifact':
    case 'render':
      return 'waiting for the source artifact of this revision';
    case 'reconcile':
      return 'waiting for the controller to apply this revision (its queue or interval)';
    case 'health': {
      const r = got.get('reconcile');
      if (!r) return 'waits for the reconcile';
      if (r.data.status === 'held')
        return 'waits for the prune approval: the controller holds this revision at its prune';
      return r.data.status === 'failed' || r.data.status === 'unknown'
        ? 'not reached: the reconcile did not apply this revision'
        : 'waiting for the objects to become Healthy or Degraded';
    }
    case 'verification':
      return got.has('health') ? 'waiting for the rollout, then the check runs' : 'runs after the health state';
    default:
      return 'pending';
  }
}

/** The recorded states that decide whether a release is live (review and promotion are governance, not liveness). */
const REQUIRED: ReleaseStateName[] = RELEASE_STATES.filter((s) => s !== 'review' && s !== 'promotion');

function firstIncomplete(states: ReleaseStateView[]): { state: ReleaseStateName; why: string } | undefined {
  const s = states.find((x) => REQUIRED.includes(x.name) && x.status !== 'ok');
  return s
    ? {
        state: s.name,
        // a hold says itself ("held by the prune policy: …"), every other status is named first
        why: s.status === 'held' && s.why ? s.why : `${s.status}: ${s.why ?? 'no reason recorded'}`,
      }
    : undefined;
}

// ---- small helpers for the recorder ---------------------------------------------------------------------------

/** Seconds between two ISO times (b − a), or undefined when either is not a time. */
export function secondsBetween(a: string | undefined, b: string | undefined): number | undefined {
  const ta = a ? Date.parse(a) : NaN;
  const tb = b ? Date.parse(b) : NaN;
  return Number.isNaN(ta) || Number.isNaN(tb) ? undefined : Math.round((tb - ta) / 100) / 10;
}
