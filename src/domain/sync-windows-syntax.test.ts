import { describe, expect, it } from 'vitest';
import { globMatch, loadZone, parseArgoSchedule, parseGoDuration } from './sync-windows-syntax.ts';

const T = (iso: string) => Date.parse(iso);
const fires = (schedule: string) => {
  const p = parseArgoSchedule(schedule);
  if ('error' in p) throw new Error(p.error);
  return p.fires;
};
const scheduleError = (schedule: string) => {
  const p = parseArgoSchedule(schedule);
  return 'error' in p ? p.error : undefined;
};
/** the next n fires after `from`, as ISO strings */
const runs = (schedule: string, from: string, n: number) => {
  const f = fires(schedule);
  const out: string[] = [];
  for (let t = T(from); out.length < n;) {
    t = f.next(t);
    out.push(new Date(t).toISOString());
  }
  return out;
};

describe('parseGoDuration (Go time.ParseDuration)', () => {
  it.each([
    ['1h', 3_600_000],
    ['30m', 1_800_000],
    ['1h30m', 5_400_000],
    ['90s', 90_000],
    ['1.5h', 5_400_000],
    ['.5h', 1_800_000],
    ['1.h', 3_600_000],
    ['-1h', -3_600_000],
    ['+2m', 120_000],
    ['0', 0],
    ['300ms', 300],
    ['1h0m0s', 3_600_000],
  ])('%s', (s, ms) => expect(parseGoDuration(s)).toEqual({ ms }));

  // TestSyncWindows_Active "InvalidDuration" (3a) and TestSyncWindow_Validate "IncorrectDuration" (1000days)
  it.each(['', '1', '3a', '1000days', '1d', '1h 30m', '1H', '.', '-', '1.5.5h'])('refuses %j', (s) =>
    expect(parseGoDuration(s)).toHaveProperty('error'),
  );
});

describe('parseArgoSchedule (robfig/cron v3, Minute|Hour|Dom|Month|Dow)', () => {
  it('refuses descriptors: Argo CD builds its parser without cron.Descriptor', () => {
    for (const d of ['@hourly', '@daily', '@weekly', '@every 1h'])
      expect(scheduleError(d)).toMatch(/does not accept descriptors/);
  });

  it.each([
    ['* 10 * * 7', /above maximum/], // TestSyncWindows_Active "MatchNone-InvalidSchedule": Sunday is 0, not 7
    ['* * *', /expected exactly 5 fields/], // TestSyncWindow_Validate "IncorrectSchedule"
    ['invalid-cron-schedule', /expected exactly 5 fields/], // TestSyncWindows_CanSync
    ['0 0 * * * *', /expected exactly 5 fields/], // no seconds field
    ['60 * * * *', /above maximum/],
    ['*/0 * * * *', /positive number/],
    ['1-2-3 * * * *', /too many hyphens/],
    ['1/2/3 * * * *', /too many slashes/],
    ['5-1 * * * *', /beyond end/],
    ['0 0 0 * *', /below minimum/],
    ['L * * * *', /failed to parse int/],
    ['0 0 * * MON#1', /failed to parse int/],
    ['', /empty spec/],
    ['CRON_TZ=Nowhere/City 0 * * * *', /bad location/],
    ['TZ=UTC', /panics/],
  ])('refuses %j', (s, re) => expect(scheduleError(s)).toMatch(re));

  it("accepts robfig's leniencies: names in any case, '?', '+N', '*-junk', empty list items, N/step", () => {
    for (const s of ['0 9 ? JAN-mar Mon-FRI', '+5 * * * *', '*-5 * * * *', '1,,2 * * * *', '5/15 * * * *'])
      expect(scheduleError(s)).toBeUndefined();
    expect(runs('5/20 * * * *', '2025-01-01T00:00:00Z', 3)).toEqual([
      '2025-01-01T00:05:00.000Z',
      '2025-01-01T00:25:00.000Z',
      '2025-01-01T00:45:00.000Z',
    ]);
  });

  it('next is strictly after t, at minute precision (robfig adds a second and drops the nanoseconds)', () => {
    const f = fires('0 10 * * *');
    expect(f.next(T('2025-01-01T10:00:00Z'))).toBe(T('2025-01-02T10:00:00Z'));
    expect(f.next(T('2025-01-01T09:59:59.999Z'))).toBe(T('2025-01-01T10:00:00Z'));
    expect(fires('* * * * *').next(T('2025-01-01T10:00:00.500Z'))).toBe(T('2025-01-01T10:01:00Z'));
    expect(f.prev(T('2025-01-02T10:00:00Z'))).toBe(T('2025-01-01T10:00:00Z'));
    expect(f.prev(T('2025-01-02T10:00:00.001Z'))).toBe(T('2025-01-02T10:00:00Z'));
  });

  it('ORs day-of-month and day-of-week when both are restricted, as robfig (and Vixie cron) do', () => {
    // 2025-02-01 is a Saturday: the 1st matches although it is no Monday
    expect(runs('0 0 1 * 1', '2025-01-28T00:00:00Z', 3)).toEqual([
      '2025-02-01T00:00:00.000Z',
      '2025-02-03T00:00:00.000Z',
      '2025-02-10T00:00:00.000Z',
    ]);
    // step 2 clears robfig's star bit: odd days OR Mondays (the 10th is an even Monday)
    expect(runs('0 0 */2 * 1', '2025-02-06T00:00:00Z', 3)).toEqual([
      '2025-02-07T00:00:00.000Z',
      '2025-02-09T00:00:00.000Z',
      '2025-02-10T00:00:00.000Z',
    ]);
  });

  it("ANDs them when either has robfig's star bit: '*', '?', '*/1', or a list with '*'", () => {
    for (const dom of ['*', '?', '*/1', '*,5'])
      expect(runs(`0 0 ${dom} * 1`, '2025-01-28T00:00:00Z', 2)).toEqual([
        '2025-02-03T00:00:00.000Z',
        '2025-02-10T00:00:00.000Z',
      ]);
    expect(runs('0 0 15 * */1', '2025-01-01T00:00:00Z', 2)).toEqual([
      '2025-01-15T00:00:00.000Z',
      '2025-02-15T00:00:00.000Z',
    ]);
  });

  it('returns the zero time when nothing fires within five years (robfig yearLimit)', () => {
    expect(fires('0 0 30 2 *').next(T('2025-01-01T00:00:00Z'))).toBe(-Infinity);
    // 29 February: 2104 is more than five years after 2097 (2100 is no leap year)
    expect(fires('0 0 29 2 *').next(T('2097-03-01T00:00:00Z'))).toBe(-Infinity);
    expect(fires('0 0 29 2 *').next(T('2025-03-01T00:00:00Z'))).toBe(T('2028-02-29T00:00:00Z'));
  });

  it('reads a CRON_TZ= prefix in that zone', () => {
    expect(runs('CRON_TZ=Europe/Berlin 0 16 * * 5', '2025-03-20T00:00:00Z', 2)).toEqual([
      '2025-03-21T15:00:00.000Z',
      '2025-03-28T15:00:00.000Z',
    ]);
    expect(runs('TZ=Europe/Berlin 0 16 * * 5', '2025-03-30T00:00:00Z', 1)).toEqual(['2025-04-04T14:00:00.000Z']);
  });

  it('CRON_TZ: a wall time skipped in spring does not fire, one repeated in autumn fires twice (robfig)', () => {
    expect(runs('CRON_TZ=Europe/Berlin 30 2 * * *', '2025-03-29T01:40:00Z', 1)).toEqual(['2025-03-31T00:30:00.000Z']);
    expect(runs('CRON_TZ=America/New_York 30 1 * * *', '2025-11-02T05:00:00Z', 3)).toEqual([
      '2025-11-02T05:30:00.000Z',
      '2025-11-02T06:30:00.000Z',
      '2025-11-03T06:30:00.000Z',
    ]);
    expect(fires('CRON_TZ=America/New_York 30 1 * * *').prev(T('2025-11-02T07:00:00Z'))).toBe(
      T('2025-11-02T06:30:00Z'),
    );
  });
});

describe('globMatch (Argo CD globMatch over gobwas/glob, no separators)', () => {
  it.each([
    ['*', '', true],
    ['test-*', 'test-app', true], // TestSyncWindows_Matches "MatchWildcardAppName"
    ['clusterN*', 'clusterName', true],
    ['test-*', 'prod-app', false],
    ['https://*.svc', 'https://kubernetes.default.svc', true], // '*' crosses '/' and '.'
    ['?', 'a', true],
    ['?', 'ab', false],
    ['?', '', true], // gobwas's single-rune matcher alone takes "" (match/single.go)
    ['[!a]', '', true],
    ['[a]', '', false],
    ['a?', 'a', false],
    ['app-[0-9]', 'app-7', true],
    ['app-[!0-9]', 'app-7', false],
    ['app-[abc]', 'app-b', true],
    ['[ab-c]', '-', true], // a range only opens the class: the rest is a list
    ['{prod,staging}-*', 'staging-web', true],
    ['{prod,staging}-*', 'dev-web', false],
    ['{a,b', 'b', true], // gobwas closes the braces at the end
    ['a\\*', 'a*', true],
    ['a\\*', 'ab', false],
    ['a}b,c', 'a}b,c', true],
    ['x.y', 'xzy', false],
    ['[', '[', false], // does not compile: matches nothing
    ['[]', '', false],
    ['[z-a]', 'm', false],
    ['Test-App', 'test-app', false],
  ])('%j ~ %j → %s', (pattern, value, expected) => expect(globMatch(pattern, value)).toBe(expected));
});

describe('loadZone (Go time.LoadLocation)', () => {
  it('UTC for "", a warning and UTC for a name Go cannot load', () => {
    expect(loadZone(undefined)).toEqual({ zone: 'UTC' });
    expect(loadZone('')).toEqual({ zone: 'UTC' });
    expect(loadZone('Europe/Berlin')).toEqual({ zone: 'Europe/Berlin' });
    expect(loadZone('Mars/Olympus')).toMatchObject({ zone: 'UTC', warning: expect.stringMatching(/UTC/) });
    expect(loadZone('europe/berlin')).toMatchObject({ zone: 'UTC' }); // Go's zoneinfo lookup is case-sensitive
  });
});
