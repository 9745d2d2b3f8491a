// What the releases route adds to the timeline (release.ts): "merged, but not live — why?" from the newest
// release and the app's live conditions, and where each release's promotion state points (the next environment).
import { windowOfActor } from './window-actor.ts';
import { pruneHoldLine } from './prune-hold.ts';
import { shaOf } from './release-commit.ts';
import type { ReleaseStateName, ReleaseView } from './release.ts';

export interface AppConditionsView {
  sync: string;
  health: string;
  healthMessage: string;
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>;
  source: { revisionWanted?: string; revisionObserved?: string; revisionAttempted?: string; sourceReady?: string };
  automation: { suspended: boolean };
  clusterReachable: boolean;
  /** Flux: "waiting on infra-dev (not Ready: …)" while the controller holds the app for a dependency */
  waitingOn?: string;
  /** its controller's prune waits for an approved preview (prune-hold.ts) */
  pruneHold?: { objects: string[]; count: number };
  /** set while the app is frozen (its object's annotations): by a person, or by a planned window */
  freeze?: { by: string; reason: string; until: string } | undefined;
}

/** the states a controller never reaches for a revision while its app is paused */
const BEFORE_APPLY: readonly ReleaseStateName[] = ['artifact', 'render', 'validation', 'reconcile'];

/**
 * Why a frozen app's controller applies nothing (issue 43): "held by window holiday-freeze until …" for a freeze a
 * planned window started, "held by a freeze until … (on-call: reason)" for a person's. Its own words, never
 * "pending" or "waiting for the controller".
 */
export function freezeHoldLine(freeze: { by: string; reason: string; until: string }): string {
  const until = freeze.until.replace(/\.\d{3}Z$/, 'Z');
  const window = windowOfActor(freeze.by);
  return window
    ? `held by window ${window} until ${until}`
    : `held by a freeze until ${until} (${freeze.by}: ${freeze.reason})`;
}

/**
 * The newest release's reconcile, not yet recorded while the app is frozen, is held by the freeze (its own status
 * and words) instead of pending. Older releases and recorded states are left as they are.
 */
export function heldByFreeze(releases: ReleaseView[], freeze: AppConditionsView['freeze']): ReleaseView[] {
  const [newest, ...rest] = releases;
  if (!freeze || !newest) return releases;
  const reconcile = newest.states.find((s) => s.name === 'reconcile');
  if (reconcile?.status !== 'pending') return releases;
  const why = freezeHoldLine(freeze);
  const states = newest.states.map((s) => (s === reconcile ? { ...s, status: 'held' as const, why } : s));
  const blocked =
    newest.blocked && BEFORE_APPLY.includes(newest.blocked.state)
      ? { state: 'reconcile' as const, why }
      : newest.blocked;
  return [{ ...newest, states, ...(blocked ? { blocked } : {}) }, ...rest];
}

/**
 * "Merged, but not live — why?": the newest release's first incomplete state, refined with the app's live
 * conditions (the controller's own words win over the recorder's pending guess). Undefined when it is live.
 */
export function whyNotLive(
  release: ReleaseView | undefined,
  app: AppConditionsView,
): { state: ReleaseStateName; why: string } | undefined {
  if (!release?.blocked) return undefined;
  const { state } = release.blocked;
  if (!app.clusterReachable)
    return { state, why: 'the cluster is unreachable: the console cannot see what the controller did' };
  // frozen (by on-call or a planned window): said as the freeze, before the suspension it made
  if (app.freeze && BEFORE_APPLY.includes(state)) return { state: 'reconcile', why: freezeHoldLine(app.freeze) };
  if (app.automation.suspended)
    return { state: 'reconcile', why: 'the app is suspended: its controller applies nothing' };
  // held for a dependency: the controller applies nothing of this app until that one is Ready
  if (app.waitingOn && BEFORE_APPLY.includes(state)) return { state: 'reconcile', why: app.waitingOn };
  // held by the console's prune policy: its own words, never "the controller failed (PruneFailed)"
  if (app.pruneHold && BEFORE_APPLY.includes(state)) return { state: 'reconcile', why: pruneHoldLine(app.pruneHold) };
  const ready = app.conditions.find((c) => c.type === 'Ready');
  const sourceNotReady = app.source.sourceReady && !app.source.sourceReady.startsWith('True');
  const renderPending = release.states.find((x) => x.name === 'render')?.status === 'pending';
  if (sourceNotReady && (['change', 'artifact'].includes(state) || (state === 'render' && renderPending)))
    return { state: 'artifact', why: `source not fetched: ${app.source.sourceReady}` };
  if (
    ready?.status === 'False' &&
    shaOf(app.source.revisionAttempted) === release.sha &&
    ['artifact', 'render', 'reconcile'].includes(state)
  ) {
    const what = /Build|kustomize/i.test(ready.reason ?? '')
      ? 'render failed'
      : /Health/i.test(ready.reason ?? '')
        ? 'health check failed'
        : 'the controller failed';
    return {
      state: state === 'artifact' ? 'render' : state,
      why: `${what} (${ready.reason ?? 'Ready=False'}): ${ready.message ?? ''}`.trim(),
    };
  }
  return release.blocked;
}

/**
 * The promotion state names where a release goes next: the next environment in the order, or, in the last one,
 * that there is nowhere to promote to (grey, not pending forever).
 */
export function withPromotionTarget(releases: ReleaseView[], env: string, order: string[]): ReleaseView[] {
  const at = order.indexOf(env);
  const next = at >= 0 ? order[at + 1] : undefined;
  const why = next
    ? `${next} does not run these digests (yet)`
    : at >= 0
      ? `${env} is the last environment (${order.join(' → ')}): nothing to promote to`
      : `${env} is not in the environment order (${order.join(' → ')}): no next environment`;
  return releases.map((r) => ({
    ...r,
    states: r.states.map((s) =>
      s.name === 'promotion' && s.status === 'pending' ? { ...s, status: next ? 'pending' : 'unknown', why } : s,
    ),
  }));
}

/**
 * One set of words for whether a release runs, for every screen (the app's release list, the app header): a
 * release whose reconcile applied it is live, whatever failed after (health, verification); one that stops before
 * is merged but not live; a live release whose review failed says that too, never "every state completed".
 */
export function releaseLiveness(
  release: Pick<ReleaseView, 'states'>,
  notLive: { state: ReleaseStateName; why: string } | undefined,
): { headline: string; tone: 'ok' | 'warn'; label?: string } {
  const reconcile = release.states.find((s) => s.name === 'reconcile')?.status;
  const applied = reconcile === 'ok';
  if (notLive) {
    const words =
      applied && (notLive.state === 'health' || notLive.state === 'verification')
        ? `Live, but its ${notLive.state} ${notLive.why.startsWith('failed') ? 'failed' : 'is not done'}`
        : notLive.state === 'reconcile' && notLive.why.startsWith('held by window ')
          ? 'Merged, but held by a planned freeze window'
          : notLive.state === 'reconcile' && notLive.why.startsWith('held by a freeze ')
            ? 'Merged, but held by a freeze'
            : notLive.state === 'reconcile' &&
                (reconcile === 'held' || notLive.why.startsWith('held by the prune policy'))
              ? 'Merged, but held by the prune policy'
              : 'Merged, but not live';
    // headline: the release list's question; label: the same words before "… stops at <state>" elsewhere
    return { headline: `${words} — why?`, label: `${words}:`, tone: 'warn' };
  }
  const review = release.states.find((s) => s.name === 'review');
  if (review?.status === 'failed')
    return { headline: `live, but not reviewed: ${review.why ?? 'the review failed'}`, tone: 'warn' };
  return { headline: 'live: applied, healthy and verified', tone: 'ok' };
}
