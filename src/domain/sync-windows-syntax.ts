// The Go parsers an Argo CD sync window goes through, re-written so that the console accepts, refuses and matches
// exactly what Argo CD 3.x does (sync-windows.ts evaluates the windows). A throwaway differential run against the Go
// code (robfig/cron v3.0.1, whose parser.go and spec.go equal the pinned commit; gobwas/glob v0.2.3; Go's
// ParseDuration) agreed on ~120 000 random schedules, fire times, activities, durations and globs, bar what is named.
// - Go's time.ParseDuration, for `duration`.
// - robfig/cron v3 (v3.0.2-0.20210106135023-bc59245fe10e, Argo CD's go.mod), parser.go `Parse` with
//   `NewParser(Minute | Hour | Dom | Month | Dow)` and spec.go `Next`, for `schedule`. That parser has NO `Descriptor`
//   flag: `@hourly`, `@daily`, `@every 1h` are refused ("parser does not accept descriptors"). It takes the TZ= and
//   CRON_TZ= prefixes (not in Argo CD's docs; read like robfig, which differs from plain wall-clock reading only in
//   zones with half-hour DST such as Australia/Lord_Howe). The fields are parsed here as robfig does, written out as
//   lists, and croner (v11, 5-part mode, `domAndDow: false`, UTC) computes the fire times from them.
// - gobwas/glob v0.2.3 through Argo CD's util/glob `Match` and `globMatch` (app_project_types.go), for applications,
//   namespaces and clusters: no separators, so `*` also crosses `/` and `.`. Not reproduced: gobwas's optimizer bugs
//   with `{…}` alternatives that are empty, unclosed or mix `*` with fixed text (`a{*x,b}` does not match `acx` in
//   Argo CD; here it does). Plain alternatives like `{prod,staging}-*` and every brace-free pattern match the same.
// - time.LoadLocation for `timeZone` (checked with Intl; an unknown zone is UTC, as in Argo CD).
import { Cron } from 'croner';

// ---------------------------------------------------------------------------------------------------------------
// Go time.ParseDuration

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const MAX_NS = 2 ** 63 - 1; // Go's int64 nanoseconds (≈292 years)

/** Go's time.ParseDuration: "1h", "30m", "1h30m", "1.5h", "-2h", "0"; the result in milliseconds, or an error. */
export function parseGoDuration(input: string): { ms: number } | { error: string } {
  const fail = { error: `time: invalid duration "${input}"` };
  let s = input;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return { ms: 0 };
  if (s === '') return fail;
  let ns = 0;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const [all, whole = '', frac] = m;
    if (whole === '' && !frac) return fail; // no digits before or after the dot
    s = s.slice(all.length);
    const unitLen = s.search(/[.\d]/);
    const unit = unitLen === -1 ? s : s.slice(0, unitLen);
    if (unit === '') return { error: `time: missing unit in duration "${input}"` };
    const per = UNIT_NS[unit];
    if (per === undefined) return { error: `time: unknown unit "${unit}" in duration "${input}"` };
    s = s.slice(unit.length);
    ns += Number(whole || '0') * per + (frac ? Number(`0.${frac}`) * per : 0);
    if (ns > MAX_NS) return fail;
  }
  return { ms: (neg ? -ns : ns) / 1e6 };
}

// ---------------------------------------------------------------------------------------------------------------
// Time zones (Go time.LoadLocation, and the offset Argo CD reads with time.Now().In(loc).Zone())

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * The zone a window's `timeZone` names, as Argo CD's scheduleOffsetByTimeZone loads it: "" is UTC; a name Go cannot
 * load is UTC with a warning (Argo CD logs "Invalid time zone … Using UTC"). Intl is case-insensitive, Go's zoneinfo
 * lookup is not, so "europe/berlin" is refused like Go does. "Local" (the controller's zone) is taken as UTC.
 */
export function loadZone(name: string | undefined): { zone: string; warning?: string } {
  if (!name || name === 'UTC') return { zone: 'UTC' };
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    if (resolved !== name && resolved.toLowerCase() === name.toLowerCase()) throw new RangeError('case');
    return { zone: name };
  } catch {
    return { zone: 'UTC', warning: `invalid time zone '${name}': Argo CD uses UTC` };
  }
}

/** The UTC offset of `zone` at instant `t`, in ms (Go: `_, offset := t.In(loc).Zone()`). */
export function zoneOffsetMs(zone: string, t: number): number {
  if (zone === 'UTC') return 0;
  let f = offsetFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    offsetFormats.set(zone, f);
  }
  const name = f.formatToParts(t).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT([+-])(\d\d):(\d\d)(?::(\d\d))?$/.exec(name);
  if (!m) return 0;
  const secs = (Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4] ?? 0);
  return (m[1] === '-' ? -secs : secs) * 1000;
}

// ---------------------------------------------------------------------------------------------------------------
// robfig/cron v3, 5 fields, no descriptors

/** A parsed schedule, in robfig's terms. */
export interface CronFires {
  /** robfig `Next`: the first fire strictly after t; -Infinity for Go's zero time (nothing within five years) */
  next(t: number): number;
  /** the last fire strictly before t, or undefined */
  prev(t: number): number | undefined;
}

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const FIELDS: Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: Object.fromEntries(MONTHS.map((m, i) => [m, i + 1])) },
  { min: 0, max: 6, names: Object.fromEntries(DAYS.map((d, i) => [d, i])) },
];

/** strconv.Atoi, then robfig's "negative number" check. */
function goUint(expr: string, names?: Record<string, number>): number | string {
  const named = names?.[expr.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[+-]?\d+$/.test(expr)) return `failed to parse int from ${expr}`;
  const n = Number(expr);
  if (Math.abs(n) > MAX_NS) return `failed to parse int from ${expr}: value out of range`;
  return n < 0 ? `negative number (${n}) not allowed: ${expr}` : n;
}

interface Field {
  values: number[];
  /** robfig's star bit: `*` or `?` with no step or step 1 */
  star: boolean;
}

/** robfig getField/getRange: the field's values and its star bit, or the error. */
function parseField(field: string, b: Bounds): Field | string {
  const values = new Set<number>();
  let star = false;
  for (const expr of field.split(',').filter((r) => r !== '')) {
    const rangeAndStep = expr.split('/');
    const lowAndHigh = rangeAndStep[0]!.split('-');
    let start: number | string;
    let end: number | string;
    let isStar = false;
    if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
      [start, end, isStar] = [b.min, b.max, true]; // robfig ignores anything after "*-"
    } else {
      start = goUint(lowAndHigh[0]!, b.names);
      if (lowAndHigh.length > 2) return `too many hyphens: ${expr}`;
      end = lowAndHigh.length === 2 ? goUint(lowAndHigh[1]!, b.names) : start;
    }
    let step: number | string = 1;
    if (rangeAndStep.length > 2) return `too many slashes: ${expr}`;
    if (rangeAndStep.length === 2) {
      step = goUint(rangeAndStep[1]!);
      if (typeof step === 'string') return step;
      if (lowAndHigh.length === 1) end = b.max; // "N/step" means "N-max/step"
      if (step > 1) isStar = false;
    }
    if (typeof start === 'string') return start;
    if (typeof end === 'string') return end;
    if (start < b.min) return `beginning of range (${start}) below minimum (${b.min}): ${expr}`;
    if (end > b.max) return `end of range (${end}) above maximum (${b.max}): ${expr}`;
    if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
    if (step === 0) return `step of range should be a positive number: ${expr}`;
    for (let v = start; v <= end; v += step) values.add(v);
    star ||= isStar;
  }
  return { values: [...values].sort((x, y) => x - y), star };
}

const NEVER: CronFires = { next: () => -Infinity, prev: () => undefined };

/**
 * robfig's Parse for Argo CD's parser, as next/prev functions. The fields are written out as lists for croner, with
 * `*` exactly where robfig sets its star bit: robfig ANDs day-of-month and day-of-week when either has the star bit,
 * and ORs them otherwise, which is croner's rule with `domAndDow: false` when its `*` fields are robfig's star fields.
 */
export function parseArgoSchedule(input: string): { fires: CronFires } | { error: string } {
  let parsed = schedules.get(input);
  if (!parsed) {
    if (schedules.size > 1000) schedules.clear();
    parsed = parseSchedule(input);
    schedules.set(input, parsed);
  }
  return parsed;
}

const schedules = new Map<string, { fires: CronFires } | { error: string }>();

function parseSchedule(input: string): { fires: CronFires } | { error: string } {
  if (input === '') return { error: 'empty spec string' };
  let spec = input;
  let zone: string | undefined;
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    if (space === -1) return { error: 'a TZ= prefix without a space (robfig/cron panics on it)' };
    const name = spec.slice(spec.indexOf('=') + 1, space);
    const loaded = loadZone(name);
    if (loaded.warning && name !== 'Local') return { error: `provided bad location ${name}` };
    zone = loaded.zone === 'UTC' ? undefined : loaded.zone;
    spec = spec.slice(space).trim();
  }
  if (spec.startsWith('@')) return { error: `parser does not accept descriptors: ${spec}` };
  const fields = spec.split(/[^\S\uFEFF]+/).filter((f) => f !== ''); // Go strings.Fields
  if (fields.length !== 5) return { error: `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]` };
  const parsed: Field[] = [];
  for (const [i, f] of fields.entries()) {
    const p = parseField(f, FIELDS[i]!);
    if (typeof p === 'string') return { error: p };
    parsed.push(p);
  }
  const [minute, hour, dom, month, dow] = parsed as [Field, Field, Field, Field, Field];
  const list = (f: Field) => f.values.join(',');
  let domPart: string;
  let dowPart: string;
  if (dom.star || dow.star) {
    if (!dom.values.length || !dow.values.length) return { fires: NEVER };
    [domPart, dowPart] = [dom.star ? '*' : list(dom), dow.star ? '*' : list(dow)];
  } else {
    if (!dom.values.length && !dow.values.length) return { fires: NEVER };
    // OR with an empty side is the other side alone: croner's `*` there turns the OR into an AND with "every day"
    [domPart, dowPart] = [dom.values.length ? list(dom) : '*', dow.values.length ? list(dow) : '*'];
  }
  if (!minute.values.length || !hour.values.length || !month.values.length) return { fires: NEVER };
  const pattern = `${list(minute)} ${list(hour)} ${domPart} ${list(month)} ${dowPart}`;
  // utcOffset 0 rather than timezone 'UTC': the same times, ten times faster (no Intl per step)
  const cron = new Cron(pattern, { mode: '5-part', domAndDow: false, utcOffset: 0 });
  const utc: CronFires = {
    next: (t) => cron.nextRun(new Date(t))?.getTime() ?? -Infinity,
    prev: (t) => cron.previousRuns(1, new Date(t))[0]?.getTime(),
  };
  const fires = zone ? zonedFires(utc, zone) : utc;
  const yearAt = (t: number) => new Date(t + (zone ? zoneOffsetMs(zone, t) : 0)).getUTCFullYear();
  return {
    fires: {
      next(t) {
        const n = fires.next(t);
        // robfig gives up (zero time) after the fifth year following the start's year
        return yearAt(n) > yearAt(Math.floor(t / 1000) * 1000 + 1000) + 5 ? -Infinity : n;
      },
      prev: fires.prev,
    },
  };
}

const HOUR = 3_600_000;

/**
 * robfig's Next in a CRON_TZ zone steps through real time and compares the zone's wall clock: a wall time that a
 * spring change skips never fires, one that the autumn change repeats fires twice. So: the fires of the pattern read
 * on wall-clock time (in UTC), each mapped to the real instants showing that wall time (none, one or two).
 */
function zonedFires(wall: CronFires, zone: string): CronFires {
  const reals = (w: number) =>
    [...new Set([zoneOffsetMs(zone, w - 14 * HOUR), zoneOffsetMs(zone, w + 14 * HOUR)])]
      .map((o) => w - o)
      .filter((r) => r + zoneOffsetMs(zone, r) === w);
  // wall-clock order and real order differ by at most the repeated hour: look 3 h of wall clock past the first hit
  const search = (t: number, dir: 1 | -1) => {
    let best: number | undefined;
    let w = t + zoneOffsetMs(zone, t) - dir * 3 * HOUR;
    for (let i = 0; i < 10_000; i++) {
      const next = dir === 1 ? wall.next(w) : wall.prev(w);
      if (next === undefined || !Number.isFinite(next)) break;
      if (best !== undefined && dir * (next - (best + zoneOffsetMs(zone, best))) > 3 * HOUR) break;
      for (const r of reals(next)) if (dir * (r - t) > 0 && (best === undefined || dir * (best - r) > 0)) best = r;
      w = next;
    }
    return best;
  };
  return { next: (t) => search(t, 1) ?? -Infinity, prev: (t) => search(t, -1) };
}

// ---------------------------------------------------------------------------------------------------------------
// gobwas/glob v0.2.3 without separators, as a RegExp

const globs = new Map<string, RegExp | null>();
const reText = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
const reClass = (c: string) => c.replace(/[\\\][^-]/g, '\\$&');

/** gobwas/glob's lexer and parser: null where glob.Compile fails. */
function compileGlob(pattern: string): RegExp | null {
  const cs = Array.from(pattern);
  let i = 0;
  let cur = '';
  const groups: { before: string; alts: string[] }[] = [];
  const top: string[] = []; // the kinds of the nodes outside braces
  const text = (breakers: string) => {
    let out = '';
    for (let escaped = false; i < cs.length; i++) {
      const c = cs[i]!;
      if (!escaped && c === '\\') escaped = true;
      else if (!escaped && breakers.includes(c)) break;
      else [out, escaped] = [out + c, false];
    }
    return out;
  };
  while (i < cs.length) {
    const c = cs[i++]!;
    if (c === '{') {
      groups.push({ before: cur, alts: [] });
      cur = '';
    } else if (c === ',' && groups.length) {
      groups.at(-1)!.alts.push(cur);
      cur = '';
    } else if (c === '}' && groups.length) {
      const g = groups.pop()!;
      cur = `${g.before}(?:${[...g.alts, cur].join('|')})`;
    } else if (c === '*') {
      if (cs[i] === '*') i++; // "**", the super-asterisk: the same without separators
      cur += '.*';
    } else if (c === '?') {
      if (!groups.length) top.push('single');
      cur += '.';
    } else if (c === '[') {
      let not = false;
      if (cs[i] === '!') [not, i] = [true, i + 1];
      let cls: string;
      if (cs[i] !== undefined && cs[i + 1] === '-') {
        const [lo, hi] = [cs[i]!, cs[i + 2]];
        if (hi === undefined || hi.codePointAt(0)! < lo.codePointAt(0)!) return null;
        cls = `${reClass(lo)}-${reClass(hi)}`;
        i += 3;
      } else {
        cls = reClass(text(']'));
        if (cls === '') return null; // "could not parse range"
      }
      if (cs[i++] !== ']') return null;
      if (!groups.length) top.push(not ? 'single' : 'class');
      cur += `[${not ? '^' : ''}${cls}]`;
    } else {
      i--;
      const t = text(groups.length ? '?*[{},' : '?*[{');
      if (!groups.length && t) top.push('text');
      cur += reText(t);
    }
    if (c === '{' || c === '*') top.push('other');
  }
  while (groups.length) {
    const g = groups.pop()!; // gobwas closes unterminated alternatives at the end of the pattern
    cur = `${g.before}(?:${[...g.alts, cur].join('|')})`;
  }
  // gobwas's single-rune matchers (match/single.go, match/list.go) take "" for a rune not in their set: a pattern that
  // is only `?` or `[!…]` matches the empty string too
  return new RegExp(top.length === 1 && top[0] === 'single' ? `^(?:${cur})?$` : `^${cur}$`, 'su');
}

/** Argo CD's globMatch(pattern, val, false): "*" matches anything, a pattern gobwas cannot compile matches nothing. */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  if (!globs.has(pattern)) {
    if (globs.size > 1000) globs.clear();
    globs.set(pattern, compileGlob(pattern));
  }
  return globs.get(pattern)?.test(value) ?? false;
}
