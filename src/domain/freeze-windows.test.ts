// Planned freeze windows (issue 43): what is refused (each error naming its field), which apps a window covers,
// when a one-off or recurring window is in force (in its time zone, across a DST change), and how windows combine.
import { describe, expect, it } from 'vitest';
import {
  combine,
  occurrences,
  windowCovers,
  windowErrors,
  windowState,
  WINDOW_MAX_OCCURRENCES,
  type FreezeWindowSpec,
} from './freeze-windows.ts';

const NOW = Date.parse('2026-12-07T09:00:00Z'); // a Monday
const iso = (t: number) => new Date(t).toISOString();
const holiday: FreezeWindowSpec = {
  name: 'holiday',
  reason: 'holiday freeze',
  scope: { envs: ['prod'] },
  start: '2026-12-20T00:00:00+01:00',
  end: '2027-01-03T00:00:00+01:00',
};
const friday: FreezeWindowSpec = {
  name: 'friday-afternoon',
  reason: 'no deploys Friday after 16:00',
  scope: { clusters: ['prod'] },
  cron: '0 16 * * 5',
  timeZone: 'Europe/Berlin',
  minutes: 8 * 60,
};
const fields = (w: FreezeWindowSpec, now = NOW) => windowErrors(w, now).map((e) => e.field);

describe('windowErrors', () => {
  it('accepts a one-off and a recurring window', () => {
    expect(windowErrors(holiday, NOW)).toEqual([]);
    expect(windowErrors(friday, NOW)).toEqual([]);
  });

  it('refuses an end before the start, a window in the past, one too long, times without a zone', () => {
    expect(windowErrors({ ...holiday, end: '2026-12-19T00:00:00+01:00' }, NOW)).toEqual([
      { field: 'end', message: 'the end is before the start' },
    ]);
    expect(windowErrors(holiday, Date.parse('2027-01-04T00:00:00Z'))).toEqual([
      { field: 'end', message: 'the window is in the past' },
    ]);
    expect(fields({ ...holiday, end: '2027-03-01T00:00:00Z' })).toEqual(['end']);
    expect(fields({ ...holiday, start: '2026-12-20T00:00:00' })).toEqual(['start']);
    expect(fields({ ...holiday, end: 'tomorrow' })).toEqual(['end']);
  });

  it('refuses an unknown time zone, a malformed cron, one that never fires, a bad duration', () => {
    expect(windowErrors({ ...friday, timeZone: 'Mars/Olympus' }, NOW)).toEqual([
      { field: 'timeZone', message: 'unknown time zone "Mars/Olympus" (an IANA name such as Europe/Berlin)' },
    ]);
    expect(fields({ ...friday, cron: '61 16 * * 5' })).toEqual(['cron']);
    expect(fields({ ...friday, cron: '@daily' })).toEqual(['cron']);
    expect(windowErrors({ ...friday, cron: '0 0 31 2 *' }, NOW)).toEqual([
      { field: 'cron', message: 'the schedule never fires (not within 400 days)' },
    ]);
    expect(fields({ ...friday, minutes: 0 })).toEqual(['minutes']);
    expect(fields({ ...friday, minutes: 1.5 })).toEqual(['minutes']);
    expect(fields({ ...friday, minutes: 63 * 24 * 60 })).toEqual(['minutes']);
  });

  it('refuses a missing reason or name, an empty scope, and both kinds (or neither) at once', () => {
    expect(fields({ ...holiday, reason: '  ' })).toEqual(['reason']);
    expect(fields({ ...holiday, name: 'Holiday Freeze' })).toEqual(['name']);
    expect(fields({ ...holiday, scope: {} })).toEqual(['scope']);
    expect(fields({ ...holiday, scope: { labels: {} } })).toEqual(['scope']);
    expect(fields({ ...holiday, cron: '0 16 * * 5' })).toEqual(['start']);
    const { start: _s, end: _e, ...neither } = holiday;
    expect(fields(neither)).toEqual(['start']);
  });
});

describe('windowCovers', () => {
  const app = {
    id: 'prod/flux-system/kustomization/payments',
    cluster: 'prod',
    env: 'prod',
    labels: { team: 'payments' },
  };
  it('matches every selector it names (each list: any of it); never an empty scope', () => {
    expect(windowCovers({ scope: { envs: ['prod'] } }, app)).toBe(true);
    expect(windowCovers({ scope: { envs: ['staging', 'prod'], clusters: ['prod'] } }, app)).toBe(true);
    expect(windowCovers({ scope: { envs: ['prod'], clusters: ['nonprod'] } }, app)).toBe(false);
    expect(windowCovers({ scope: { apps: [app.id] } }, app)).toBe(true);
    expect(windowCovers({ scope: { labels: { team: 'payments' } } }, app)).toBe(true);
    expect(windowCovers({ scope: { labels: { team: 'search' } } }, app)).toBe(false);
    expect(windowCovers({ scope: { labels: { team: 'payments' } } }, { ...app, labels: undefined })).toBe(false);
    expect(windowCovers({ scope: {} }, app)).toBe(false);
  });
});

describe('occurrences and windowState', () => {
  it('a recurrence fires in its own time zone, across the DST change', () => {
    const summer = occurrences(friday, Date.parse('2027-03-22T00:00:00Z'), Date.parse('2027-04-03T00:00:00Z'));
    // Friday 16:00 in Berlin: 15:00Z in winter (CET), 14:00Z after the change on 2027-03-28 (CEST)
    expect(summer.map((s) => iso(s.from))).toEqual(['2027-03-26T15:00:00.000Z', '2027-04-02T14:00:00.000Z']);
    expect(summer.map((s) => s.until - s.from)).toEqual([8 * 3_600_000, 8 * 3_600_000]);
  });

  it('in force from its start until its end; an occurrence that began before the range is included', () => {
    const fri = Date.parse('2026-12-11T18:00:00Z'); // Friday 19:00 in Berlin
    const st = windowState([friday], fri);
    expect(st.active && iso(st.active.from)).toBe('2026-12-11T15:00:00.000Z');
    expect(st.active && iso(st.active.until)).toBe('2026-12-11T23:00:00.000Z');
    expect(st.next && iso(st.next.from)).toBe('2026-12-18T15:00:00.000Z');
    const before = windowState([friday], NOW);
    expect(before.active).toBeNull();
    expect(before.next && iso(before.next.from)).toBe('2026-12-11T15:00:00.000Z');
    // the end itself is not in force
    expect(windowState([friday], Date.parse('2026-12-11T23:00:00Z')).active).toBeNull();
  });

  it('overlapping windows combine: frozen until the last end of the chain', () => {
    const eve: FreezeWindowSpec = {
      ...holiday,
      name: 'new-year',
      start: '2027-01-02T12:00:00+01:00',
      end: '2027-01-05T00:00:00+01:00',
    };
    const st = windowState([holiday, eve], Date.parse('2026-12-24T12:00:00Z'));
    expect(st.active && iso(st.active.until)).toBe('2027-01-04T23:00:00.000Z');
    expect(st.active?.windows).toEqual(['holiday', 'new-year']);
    expect(st.atLeast).toBe(false);
    // touching stretches combine too; apart ones do not
    expect(
      combine([
        { from: 0, until: 10, windows: ['a'] },
        { from: 10, until: 20, windows: ['b'] },
        { from: 30, until: 40, windows: ['a'] },
      ]),
    ).toEqual([
      { from: 0, until: 20, windows: ['a', 'b'] },
      { from: 30, until: 40, windows: ['a'] },
    ]);
  });

  it('a recurrence that runs on past what is computed says its end is a lower bound', () => {
    const minutely: FreezeWindowSpec = { ...friday, name: 'always', cron: '* * * * *', minutes: 1 };
    const st = windowState([minutely], NOW);
    expect(st.active).not.toBeNull();
    expect(st.atLeast).toBe(true);
    expect(occurrences(minutely, NOW, NOW + 86_400_000)).toHaveLength(WINDOW_MAX_OCCURRENCES);
    // a long duration: the cap is not spent in the past (each occurrence listed is one in force now)
    const long = windowState([{ ...minutely, minutes: 600 }], NOW);
    expect(long.active && long.active.from).toBeLessThanOrEqual(NOW);
    expect(long.active && long.active.until).toBeGreaterThan(NOW);
    expect(long.atLeast).toBe(true);
    // a weekly one inside the horizon is known whole
    expect(windowState([friday], Date.parse('2026-12-11T18:00:00Z')).atLeast).toBe(false);
  });
});
