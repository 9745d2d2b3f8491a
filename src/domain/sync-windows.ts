// Argo CD sync windows (an AppProject's `spec.syncWindows`), pure: which windows apply to an Application, and whether
// an automated or a manual sync may start now, exactly as Argo CD 3.x decides it. Mirrored from
// argoproj/argo-cd v3.5.1 (109ca7ca71139e514114499d294a492e7910a965; the same code from v3.0.0 to master, bar
// syncOverrun), pkg/apis/application/v1alpha1/types.go:
// - `SyncWindows.Matches` (windowsFor): applications, then clusters, then namespaces, each a list of globs
//   (app_project_types.go `globMatch`, gobwas/glob: sync-windows-syntax.ts). A cluster glob matches the destination's
//   name or its server URL (each only when set). Without `andOperator` the first list that matches selects the window;
//   with it every list that is set must match. A window that sets no list matches no app.
// - `SyncWindow.active` / `SyncWindows.active`: the current time is shifted by the UTC offset the window's `timeZone`
//   has NOW (`scheduleOffsetByTimeZone`, time.Now()), and the cron schedule is read in UTC at that shifted time s: the
//   window is active iff robfig's `Next(s − duration)` is before s, i.e. a fire f with s − duration < f < s. Both ends
//   are open (inactive at the very start and end instants). A window crossing a DST change therefore ends by the wall
//   clock of its zone (a 6 h window over the spring change lasts 5 h). A schedule that does not fire within five years
//   ("0 0 30 2 *") makes robfig return the zero time, so Argo CD holds that window active forever; so do we.
// - `SyncWindows.CanSync(isManual, nil)` with `hasDeny`, `hasAllow`, `manualEnabled`, `InactiveAllows`: no windows →
//   allowed; any active deny → blocked, except a manual sync when every active deny has `manualSync`; else any active
//   allow → allowed; else any (inactive) allow → blocked, except a manual sync when every allow has `manualSync`; else
//   allowed. A schedule or duration that does not parse is an error for the whole list (`active` fails first): the
//   controller then skips auto-sync (controller/appcontroller.go, `canSync, _ :=`) and the API refuses a manual sync
//   ("cannot sync: invalid sync window", server/application/application.go `Sync`). We say `unknown` and name it.
// - `timeZone`: "" is UTC; a name Go cannot load is UTC too (logged; `Validate` rewrites it) — a warning here.
// - Not modelled: `syncOverrun` (3.5), which only lets an operation already running continue (CanSync's
//   operationStartTime); the console asks whether a sync may start.
import {
  globMatch,
  loadZone,
  parseArgoSchedule,
  parseGoDuration,
  zoneOffsetMs,
  type CronFires,
} from './sync-windows-syntax.ts';

/** One entry of an AppProject's `spec.syncWindows` (Argo CD's SyncWindow, JSON names). */
export interface SyncWindowSpec {
  kind: 'allow' | 'deny';
  /** cron, 5 fields (robfig/cron v3 without descriptors; TZ=/CRON_TZ= prefixes accepted) */
  schedule: string;
  /** Go duration: "1h", "30m", "1h30m" */
  duration: string;
  applications?: string[];
  namespaces?: string[];
  clusters?: string[];
  manualSync?: boolean;
  timeZone?: string;
  andOperator?: boolean;
  description?: string;
}

/** What Matches reads of an Application: its name and its destination. */
export interface SyncWindowApp {
  name: string;
  /** spec.destination.namespace */
  namespace: string;
  /** spec.destination.server */
  server?: string;
  /** spec.destination.name */
  clusterName?: string;
}

export type SyncWindowVerdict = 'allowed' | 'blocked' | 'unknown';

export interface SyncWindowsEvaluation {
  /** CanSync(false): may the controller auto-sync now; `unknown` when a window does not parse (Argo CD then refuses) */
  automated: SyncWindowVerdict;
  /** CanSync(true): may a user sync now */
  manual: SyncWindowVerdict;
  /** the windows active now; `until` when it stops being active (absent: not within 7 days) */
  active: Array<{ window: SyncWindowSpec; until?: Date }>;
  /**
   * Why automated syncs are blocked: the active deny window that lasts longest (`until` it ends), or, with no deny
   * active, the allow window that opens first (`until` it opens). Absent when automated syncs are allowed or unknown.
   */
  blockedBy?: { window: SyncWindowSpec; until?: Date };
  /** when the answer for automated syncs next changes (at or just after this instant), within 7 days */
  nextChange?: Date;
  /** windows whose schedule or duration Argo CD cannot parse */
  invalid: Array<{ window: SyncWindowSpec; reason: string }>;
  /** windows Argo CD reads with a fallback (an unknown time zone is UTC) */
  warnings: Array<{ window: SyncWindowSpec; reason: string }>;
}

/** How far ahead `until`, `blockedBy.until` and `nextChange` look. */
export const SYNC_WINDOW_HORIZON_MS = 7 * 24 * 3_600_000;
const HOUR = 3_600_000;
const MAX_STEPS = 50_000; // a guard: an every-minute schedule over 7 days takes ~10 000

/** Argo CD's SyncWindows.Matches: the windows of a project that apply to an app, in their order. */
export function windowsFor(windows: readonly SyncWindowSpec[] | undefined, app: SyncWindowApp): SyncWindowSpec[] {
  return (windows ?? []).filter((w) => windowMatches(w, app));
}

function windowMatches(w: SyncWindowSpec, app: SyncWindowApp): boolean {
  const and = w.andOperator === true;
  let matched = false;
  let isSet = false;
  if (w.applications?.length) {
    isSet = true;
    matched = w.applications.some((a) => globMatch(a, app.name));
  }
  if (and && isSet && !matched) return false;
  if (!and && matched) return true;
  if (w.clusters?.length) {
    isSet = true;
    matched = w.clusters.some(
      (c) => (!!app.clusterName && globMatch(c, app.clusterName)) || (!!app.server && globMatch(c, app.server)),
    );
  }
  if (and && isSet && !matched) return false;
  if (!and && matched) return true;
  if (w.namespaces?.length) matched = w.namespaces.some((n) => globMatch(n, app.namespace));
  return matched;
}

interface Win {
  spec: SyncWindowSpec;
  kind: string;
  manual: boolean;
  dur: number;
  zone: string;
  fires: CronFires;
}

/** A window as Argo CD parses it, or why it cannot. */
function compile(spec: SyncWindowSpec): Win | { reason: string; zoneWarning?: string } {
  const zone = loadZone(spec.timeZone);
  const schedule = parseArgoSchedule(spec.schedule ?? '');
  if ('error' in schedule) return { reason: `cannot parse schedule '${spec.schedule}': ${schedule.error}` };
  const duration = parseGoDuration(spec.duration ?? '');
  if ('error' in duration) return { reason: `cannot parse duration '${spec.duration}': ${duration.error}` };
  const win = { spec, kind: spec.kind, manual: spec.manualSync === true, dur: duration.ms, zone: zone.zone };
  return { ...win, fires: schedule.fires, ...(zone.warning ? { zoneWarning: zone.warning } : {}) };
}

/** SyncWindow.active at instant t. */
function isActive(w: Win, t: number): boolean {
  const s = t + zoneOffsetMs(w.zone, t);
  return w.fires.next(s - w.dur) < s;
}

/** CanSync over windows whose activity is known. */
function canSync(wins: Win[], active: boolean[], manual: boolean): boolean {
  const on = wins.filter((_, i) => active[i]);
  const denies = on.filter((w) => w.kind === 'deny');
  if (denies.length) return manual && denies.every((w) => w.manual);
  if (on.some((w) => w.kind === 'allow')) return true;
  const allows = wins.filter((w) => w.kind === 'allow'); // all inactive here
  if (allows.length) return manual && allows.every((w) => w.manual);
  return true;
}

/** The UTC-offset changes of each zone between `from` and `to` (DST), found hourly then to the millisecond. */
function offsetChanges(zones: Iterable<string>, from: number, to: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const zone of zones) {
    const changes: number[] = [];
    let [prevT, prevO] = [from, zoneOffsetMs(zone, from)];
    for (let t = from + HOUR; zone !== 'UTC' && prevT < to; t += HOUR) {
      const at = Math.min(t, to);
      const o = zoneOffsetMs(zone, at);
      if (o !== prevO) {
        let [lo, hi] = [prevT, at];
        while (hi - lo > 1) {
          const mid = Math.floor((lo + hi) / 2);
          if (zoneOffsetMs(zone, mid) === prevO) lo = mid;
          else hi = mid;
        }
        changes.push(hi);
        prevO = o;
      }
      prevT = at;
    }
    out.set(zone, changes);
  }
  return out;
}

/**
 * The next instant b ≥ t after which the window's activity may differ from `active` (it is active at t iff
 * `active`): the end of the occurrence it is in, the start of the next one, or a change of its zone's offset.
 */
function nextFlip(w: Win, t: number, active: boolean, changes: Map<string, number[]>): number {
  const o = zoneOffsetMs(w.zone, t);
  const s = t + o;
  let b: number;
  if (active) {
    const last = w.fires.prev(s);
    // no fire explains the activity: robfig's zero time (no fire within five years), active for good
    b = last !== undefined && last + w.dur - o > t ? last + w.dur - o : Infinity;
  } else {
    b = w.dur <= 0 ? Infinity : Math.max(t, w.fires.next(s - w.dur) - o);
  }
  const change = changes.get(w.zone)?.find((c) => c > t) ?? Infinity;
  return Math.min(b, change);
}

/** Walks one window's boundaries from t0 until its activity differs from `from`: that boundary, or undefined. */
function flipOf(w: Win, t0: number, from: boolean, horizon: number, changes: Map<string, number[]>): Date | undefined {
  let t = t0;
  for (let step = 0; step < MAX_STEPS; step++) {
    const b = nextFlip(w, t, from, changes);
    if (!(b <= horizon)) return undefined;
    if (isActive(w, b + 1) !== from) return new Date(b);
    t = b + 1;
  }
  return undefined;
}

/** Argo CD's verdict on a sync now, for automated and manual syncs, with what blocks it and when that changes. */
export function evaluateSyncWindows(windows: readonly SyncWindowSpec[] | undefined, now: Date): SyncWindowsEvaluation {
  const t0 = now.getTime();
  const horizon = t0 + SYNC_WINDOW_HORIZON_MS;
  const invalid: SyncWindowsEvaluation['invalid'] = [];
  const warnings: SyncWindowsEvaluation['warnings'] = [];
  const wins: Win[] = [];
  for (const spec of windows ?? []) {
    const w = compile(spec);
    if ('reason' in w) invalid.push({ window: spec, reason: w.reason });
    else wins.push(w);
    if ('zoneWarning' in w && w.zoneWarning) warnings.push({ window: spec, reason: w.zoneWarning });
  }
  const changes = offsetChanges(new Set(wins.map((w) => w.zone)), t0, horizon);
  const states = wins.map((w) => isActive(w, t0));
  const until = wins.map((w, i) => (states[i] ? flipOf(w, t0, true, horizon, changes) : undefined));
  const active = wins.flatMap((w, i) =>
    states[i] ? [{ window: w.spec, ...(until[i] ? { until: until[i] } : {}) }] : [],
  );
  if (invalid.length) return { automated: 'unknown', manual: 'unknown', active, invalid, warnings };

  const verdict = (ok: boolean): SyncWindowVerdict => (ok ? 'allowed' : 'blocked');
  const automatedOk = canSync(wins, states, false);
  const result: SyncWindowsEvaluation = {
    automated: verdict(automatedOk),
    manual: verdict(canSync(wins, states, true)),
    active,
    invalid,
    warnings,
  };
  if (!automatedOk) result.blockedBy = blocker(wins, states, until, t0, horizon, changes);
  const next = nextChange(wins, states, automatedOk, t0, horizon, changes);
  if (next) result.nextChange = next;
  return result;
}

function blocker(
  wins: Win[],
  states: boolean[],
  until: (Date | undefined)[],
  t0: number,
  horizon: number,
  changes: Map<string, number[]>,
): SyncWindowsEvaluation['blockedBy'] {
  const key = (d: Date | undefined) => d?.getTime() ?? Infinity;
  const denies = wins.flatMap((w, i) => (states[i] && w.kind === 'deny' ? [{ w, at: until[i] }] : []));
  const candidates = denies.length
    ? denies.sort((a, b) => key(b.at) - key(a.at)) // the deny that holds longest
    : wins
        .filter((w) => w.kind === 'allow')
        .map((w) => ({ w, at: flipOf(w, t0, false, horizon, changes) }))
        .sort((a, b) => key(a.at) - key(b.at)); // the allow that opens first
  const first = candidates[0];
  return first && { window: first.w.spec, ...(first.at ? { until: first.at } : {}) };
}

/** Sweeps every window's boundaries in time order until the automated verdict differs from the one at t0. */
function nextChange(
  wins: Win[],
  states: boolean[],
  automatedOk: boolean,
  t0: number,
  horizon: number,
  changes: Map<string, number[]>,
): Date | undefined {
  const state = [...states];
  const flips = wins.map((w, i) => nextFlip(w, t0, state[i]!, changes));
  for (let step = 0; step < MAX_STEPS; step++) {
    const b = Math.min(...flips);
    if (!(b <= horizon)) return undefined;
    for (const [i, w] of wins.entries()) {
      if (flips[i]! > b) continue;
      state[i] = isActive(w, b + 1);
      flips[i] = nextFlip(w, b + 1, state[i]!, changes);
    }
    if (canSync(wins, state, false) !== automatedOk) return new Date(b);
  }
  return undefined;
}

/** One stretch a sync window is active in: (from, until), both ends open as Argo CD reads them. */
export interface SyncWindowStretch {
  from: number;
  until: number;
}

/**
 * The stretches one window is active in, within [from, to) (a stretch running on past `to` ends there), as Argo CD
 * reads them (the zone's offset at each instant, open ends); at most `max` (`truncated` then). A window Argo CD
 * cannot parse has `error` and no stretches: its activity is unknown, never "none".
 */
export function syncWindowStretches(
  spec: SyncWindowSpec,
  from: number,
  to: number,
  max = 500,
): { stretches: SyncWindowStretch[]; truncated: boolean; error?: string } {
  const w = compile(spec);
  if ('reason' in w) return { stretches: [], truncated: false, error: w.reason };
  const changes = offsetChanges([w.zone], from, to);
  const stretches: SyncWindowStretch[] = [];
  let t = from;
  let active = isActive(w, t);
  let start = from;
  while (t < to) {
    const flip = flipOf(w, t, active, to, changes);
    if (active) {
      const until = flip ? flip.getTime() : to;
      if (until > start) stretches.push({ from: start, until });
      if (stretches.length >= max) return { stretches, truncated: until < to };
    } else if (flip) start = flip.getTime();
    if (!flip) break;
    t = flip.getTime() + 1;
    active = !active;
  }
  return { stretches, truncated: false };
}
