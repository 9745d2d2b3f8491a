// Planned freeze windows (issue 43), pure: what a window must say to be accepted, which apps it covers, when it is
// in force (a one-off start and end, or a cron recurrence in a time zone with a duration), and what all windows
// covering an app combine to: frozen now until when, or the next start. No I/O; the scheduler acts on it.
//
// Recurrences are computed by croner (maintained, time-zone aware, DST-correct; already used for Argo CD's
// windows), in its standard 5-field mode with day-of-month OR day-of-week as in Vixie cron. Overlapping and
// touching occurrences, of one window or of several, combine into one stretch: "frozen until" is its end.
import { Cron } from 'croner';

export const WINDOW_MAX_REASON = 500;
/** the longest one occurrence may last (a holiday freeze: two weeks and more) */
export const WINDOW_MAX_DAYS = 62;
/** a recurrence must fire within this long from now, or it is refused as one that never fires */
export const WINDOW_HORIZON_DAYS = 400;
/** at most this many occurrences are listed per window and range (a calendar's 30 days of a minutely cron) */
export const WINDOW_MAX_OCCURRENCES = 500;

const DAY = 86_400_000;
const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface WindowScope {
  clusters?: string[] | undefined;
  envs?: string[] | undefined;
  /** app ids (`cluster/namespace/kind/name`) */
  apps?: string[] | undefined;
  /** every label must match the app object's */
  labels?: Record<string, string> | undefined;
}

export interface FreezeWindowSpec {
  name: string;
  reason: string;
  scope: WindowScope;
  /** one-off: ISO 8601 with a zone or offset */
  start?: string | undefined;
  end?: string | undefined;
  /** recurring: a 5-field cron read in `timeZone` (IANA), each firing starting an occurrence of `minutes` */
  cron?: string | undefined;
  timeZone?: string | undefined;
  minutes?: number | undefined;
}

export interface FieldError {
  field: string;
  message: string;
}

/** One stretch a window (or several, combined) is in force: [from, until). */
export interface Stretch {
  from: number;
  until: number;
  /** the windows in force in it */
  windows: string[];
}

export interface WindowApp {
  id: string;
  cluster: string;
  env: string;
  labels?: Record<string, string> | undefined;
}

const hasZone = (s: string) => /(Z|[+-]\d{2}:?\d{2})$/i.test(s);

/** Whether `tz` is an IANA time zone this runtime knows. */
export function knownTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function cronOf(w: FreezeWindowSpec): Cron {
  return new Cron(w.cron ?? '', { mode: '5-part', timezone: w.timeZone ?? 'UTC', paused: true });
}

/** The problems of a window, each naming its field; empty when it is valid. `now` decides "in the past". */
export function windowErrors(w: FreezeWindowSpec, now: number): FieldError[] {
  const errors: FieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field, message });
  if (!NAME.test(w.name ?? '')) add('name', 'a name is lower-case letters, digits and dashes (at most 63)');
  const reason = typeof w.reason === 'string' ? w.reason.trim() : '';
  if (!reason) add('reason', 'a reason is required');
  else if (reason.length > WINDOW_MAX_REASON)
    add('reason', `the reason is longer than ${WINDOW_MAX_REASON} characters`);
  const s = w.scope ?? {};
  const labels = Object.entries(s.labels ?? {});
  if (!s.clusters?.length && !s.envs?.length && !s.apps?.length && !labels.length)
    add('scope', 'name at least one cluster, environment, app or label (a window never covers everything by default)');
  const oneOff = w.start !== undefined || w.end !== undefined;
  const recurring = w.cron !== undefined || w.minutes !== undefined || w.timeZone !== undefined;
  if (oneOff === recurring) {
    add('start', 'give either a start and an end, or a cron, a time zone and a duration in minutes');
    return errors;
  }
  if (oneOff) {
    const from = Date.parse(w.start ?? '');
    const until = Date.parse(w.end ?? '');
    if (!w.start || Number.isNaN(from) || !hasZone(w.start))
      add('start', 'the start is an ISO 8601 time with its zone, e.g. 2026-12-20T00:00:00+01:00');
    if (!w.end || Number.isNaN(until) || !hasZone(w.end))
      add('end', 'the end is an ISO 8601 time with its zone, e.g. 2027-01-03T00:00:00+01:00');
    if (errors.some((e) => e.field === 'start' || e.field === 'end')) return errors;
    if (until <= from) add('end', 'the end is before the start');
    else if (until <= now) add('end', 'the window is in the past');
    else if (until - from > WINDOW_MAX_DAYS * DAY) add('end', `a window lasts at most ${WINDOW_MAX_DAYS} days`);
    return errors;
  }
  const tz = w.timeZone ?? '';
  if (!tz || !knownTimeZone(tz)) add('timeZone', `unknown time zone "${tz}" (an IANA name such as Europe/Berlin)`);
  const m = w.minutes;
  if (m === undefined || !Number.isInteger(m) || m <= 0) add('minutes', 'the duration is a whole number of minutes');
  else if (m > WINDOW_MAX_DAYS * 24 * 60) add('minutes', `a window lasts at most ${WINDOW_MAX_DAYS} days`);
  if (errors.some((e) => e.field === 'timeZone')) return errors;
  let cron: Cron;
  try {
    if ((w.cron ?? '').trim().split(/\s+/).length !== 5) throw new Error('five fields: minute hour day month weekday');
    cron = cronOf(w);
  } catch (e) {
    add('cron', `not a cron schedule: ${e instanceof Error ? e.message : String(e)}`);
    return errors;
  }
  const next = cron.nextRun(new Date(now));
  if (!next || next.getTime() - now > WINDOW_HORIZON_DAYS * DAY)
    add('cron', `the schedule never fires (not within ${WINDOW_HORIZON_DAYS} days)`);
  return errors;
}

/** Whether the window covers the app: every selector it names matches (a list: any of it). */
export function windowCovers(w: Pick<FreezeWindowSpec, 'scope'>, app: WindowApp): boolean {
  const s = w.scope;
  if (s.clusters?.length && !s.clusters.includes(app.cluster)) return false;
  if (s.envs?.length && !s.envs.includes(app.env)) return false;
  if (s.apps?.length && !s.apps.includes(app.id)) return false;
  for (const [k, v] of Object.entries(s.labels ?? {})) if (app.labels?.[k] !== v) return false;
  return !!(s.clusters?.length || s.envs?.length || s.apps?.length || Object.keys(s.labels ?? {}).length);
}

/** The window's occurrences that overlap [from, to), in order (at most WINDOW_MAX_OCCURRENCES). */
export function occurrences(w: FreezeWindowSpec, from: number, to: number): Stretch[] {
  if (w.start !== undefined) {
    const a = Date.parse(w.start);
    const b = Date.parse(w.end ?? '');
    return a < to && b > from ? [{ from: a, until: b, windows: [w.name] }] : [];
  }
  const ms = (w.minutes ?? 0) * 60_000;
  const cron = cronOf(w);
  const out: Stretch[] = [];
  // an occurrence that began up to its duration before `from` is still in force at `from`
  let t = cron.nextRun(new Date(from - ms - 1));
  while (t && t.getTime() < to && out.length < WINDOW_MAX_OCCURRENCES) {
    const a = t.getTime();
    if (a + ms > from) out.push({ from: a, until: a + ms, windows: [w.name] });
    t = cron.nextRun(t);
  }
  return out;
}

/** Overlapping or touching stretches combined into one (their windows listed once each). */
export function combine(stretches: readonly Stretch[]): Stretch[] {
  const sorted = [...stretches].sort((a, b) => a.from - b.from || a.until - b.until);
  const out: Stretch[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.from <= last.until) {
      last.until = Math.max(last.until, s.until);
      for (const n of s.windows) if (!last.windows.includes(n)) last.windows.push(n);
    } else out.push({ ...s, windows: [...s.windows] });
  }
  return out;
}

export interface WindowState {
  /** in force now: the combined stretch (until: its end), or null */
  active: Stretch | null;
  /** the next stretch that starts after now (within the horizon), or null */
  next: Stretch | null;
  /**
   * the active stretch runs on past what was computed (a recurrence firing more than WINDOW_MAX_OCCURRENCES times
   * in the horizon, or beyond the horizon): its `until` is a lower bound
   */
  atLeast: boolean;
}

/**
 * What the windows covering an app combine to at `now`: frozen until the end of the combined stretch that holds
 * now (a window ending while another already began keeps it frozen), and the next stretch after it.
 */
export function windowState(windows: readonly FreezeWindowSpec[], now: number, horizonMs = 31 * DAY): WindowState {
  const end = now + horizonMs;
  // occurrences starting from here on were not computed (a one-off window is known whole)
  let computedTo = Infinity;
  const all: Stretch[] = [];
  for (const w of windows) {
    // (occurrences() itself looks back one duration for an occurrence still in force at `now`)
    const occ = occurrences(w, now, end);
    if (w.start === undefined)
      computedTo = Math.min(
        computedTo,
        // a capped list: nothing is known of this window past its last occurrence's start
        occ.length >= WINDOW_MAX_OCCURRENCES ? (occ[occ.length - 1]?.from ?? now) : end,
      );
    all.push(...occ);
  }
  const stretches = combine(all);
  const active = stretches.find((s) => s.from <= now && now < s.until) ?? null;
  const next = stretches.find((s) => s.from > now) ?? null;
  return { active, next, atLeast: !!active && active.until >= computedTo };
}
