import { describe, expect, it } from 'vitest';
import {
  evaluateSyncWindows,
  syncWindowStretches,
  windowsFor,
  type SyncWindowApp,
  type SyncWindowSpec,
} from './sync-windows.ts';

const at = (iso: string) => new Date(iso);
const win = (kind: 'allow' | 'deny', schedule: string, duration: string, more: Partial<SyncWindowSpec> = {}) =>
  ({ kind, schedule, duration, ...more }) satisfies SyncWindowSpec;
const activeAt = (w: SyncWindowSpec, iso: string) => evaluateSyncWindows([w], at(iso)).active.length === 1;

// newTestApp in Argo CD's types_test.go
const app: SyncWindowApp = { name: 'test-app', namespace: 'default', server: 'cluster1', clusterName: 'clusterName' };

describe('windowsFor (SyncWindows.Matches)', () => {
  // TestSyncWindows_Matches and TestSyncWindows_Matches_AND_Operator: every case matches, with OR and with AND
  const cases: Array<[string, Partial<SyncWindowSpec>]> = [
    ['MatchNamespace', { namespaces: ['default'] }],
    ['MatchCluster', { clusters: ['cluster1'] }],
    ['MatchClusterName', { clusters: ['clusterName'] }],
    ['MatchAppName', { applications: ['test-app'] }],
    ['MatchAppNameAndNamespace', { applications: ['test-app'], namespaces: ['default'] }],
    ['MatchAppNameAndClusterName', { applications: ['test-app'], clusters: ['clusterName'] }],
    ['MatchNamespaceAndClusterName', { namespaces: ['default'], clusters: ['clusterName'] }],
    [
      'MatchAppNameAndNamespaceAndClusterName',
      { applications: ['test-app'], namespaces: ['default'], clusters: ['clusterName'] },
    ],
    ['MatchWildcardAppName', { applications: ['test-*'] }],
    ['MatchWildcardAppNameAndNamespace', { applications: ['test-*'], namespaces: ['default'] }],
    ['MatchWildcardAppNameAndWildcardClusterName', { applications: ['test-*'], clusters: ['clusterN*'] }],
  ];
  it.each(cases)('%s', (_, lists) => {
    for (const andOperator of [false, true])
      expect(windowsFor([win('allow', '* * * * *', '1h', { ...lists, andOperator })], app)).toHaveLength(1);
  });

  it('NoMatch: the builder window (app1 / public) does not apply; a window with no list applies to no app', () => {
    const w = win('allow', '* * * * *', '1h', { applications: ['app1'], namespaces: ['public'] });
    expect(windowsFor([w, win('deny', '* * * * *', '1h')], app)).toEqual([]);
    expect(windowsFor([win('deny', '* * * * *', '1h', { andOperator: true })], app)).toEqual([]);
    expect(windowsFor(undefined, app)).toEqual([]);
  });

  it('OR: the first list that matches selects the window; AND: every list that is set must match', () => {
    const lists = { applications: ['test-app'], namespaces: ['other'], clusters: ['elsewhere'] };
    expect(windowsFor([win('deny', '* * * * *', '1h', lists)], app)).toHaveLength(1);
    expect(windowsFor([win('deny', '* * * * *', '1h', { ...lists, andOperator: true })], app)).toEqual([]);
    const ns = { applications: ['nope'], namespaces: ['def*'] };
    expect(windowsFor([win('deny', '* * * * *', '1h', ns)], app)).toHaveLength(1);
    expect(windowsFor([win('deny', '* * * * *', '1h', { ...ns, andOperator: true })], app)).toEqual([]);
    const both = { clusters: ['cluster1'], namespaces: ['default'], andOperator: true };
    expect(windowsFor([win('deny', '* * * * *', '1h', both)], app)).toHaveLength(1);
  });

  it('clusters match the destination name or server, each only when set; globs cross "/" and "."', () => {
    const w = win('deny', '* * * * *', '1h', { clusters: ['*'] });
    expect(windowsFor([w], { name: 'a', namespace: 'x' })).toEqual([]);
    expect(windowsFor([w], { name: 'a', namespace: 'x', clusterName: 'in-cluster' })).toHaveLength(1);
    const url = win('deny', '* * * * *', '1h', { clusters: ['https://*.svc'] });
    expect(windowsFor([url], { name: 'a', namespace: 'x', server: 'https://kubernetes.default.svc' })).toHaveLength(1);
    expect(
      windowsFor([win('deny', '* * * * *', '1h', { namespaces: ['*'] })], { name: 'a', namespace: '' }),
    ).toHaveLength(1);
    const braces = win('deny', '* * * * *', '1h', { applications: ['{web,api}-[0-9]'] });
    expect(windowsFor([braces], { ...app, name: 'api-7' })).toHaveLength(1);
    expect(windowsFor([braces], { ...app, name: 'api-x' })).toEqual([]);
  });
});

describe('activity (SyncWindow.active)', () => {
  // TestSyncWindow_Active and TestSyncWindows_Active (their times are today at an hour, UTC)
  it.each([
    ['allow', '* 10 * * *', '2h', '2025-06-02T11:00:00Z', true],
    ['allow', '* 10 * * *', '2h', '2025-06-02T13:00:00Z', false],
    ['deny', '* 10 * * *', '2h', '2025-06-02T11:00:00Z', true],
    ['deny', '* 10 * * *', '2h', '2025-06-02T13:00:00Z', false],
    ['allow', '* 14 * * *', '2h', '2025-06-02T15:00:00Z', true],
    ['allow', '* 14 * * *', '2h', '2025-06-02T17:00:00Z', false],
  ] as const)('%s %s %s at %s → %s', (kind, schedule, duration, now, expected) =>
    expect(activeAt(win(kind, schedule, duration), now)).toBe(expected),
  );

  it('TestSyncWindows_Active MatchBoth: "* 10" and "* 11" for 3h are both active at 12:00', () => {
    const r = evaluateSyncWindows(
      [win('allow', '* 10 * * *', '3h'), win('allow', '* 11 * * *', '3h')],
      at('2025-06-02T12:00:00Z'),
    );
    expect(r.active).toHaveLength(2);
  });

  it('TestSyncWindows_Active TimeZoneSpecified: America/New_York and Asia/Dhaka, in summer and in winter', () => {
    const ny = (schedule: string) => win('allow', schedule, '2h', { timeZone: 'America/New_York' });
    for (const day of ['2025-06-02', '2025-01-13']) {
      expect(activeAt(ny('* 10 * * *'), `${day}T16:00:00Z`)).toBe(true);
      expect(activeAt(ny('* 14 * * *'), `${day}T20:00:00Z`)).toBe(true);
      expect(activeAt(ny('* 10 * * *'), `${day}T22:00:00Z`)).toBe(false);
      expect(activeAt(ny('* 14 * * *'), `${day}T22:00:00Z`)).toBe(false);
    }
    expect(activeAt(win('allow', '* 8 * * *', '2h', { timeZone: 'Asia/Dhaka' }), '2025-06-02T03:00:00Z')).toBe(true);
    expect(activeAt(win('allow', '* 12 * * *', '2h', { timeZone: 'Asia/Dhaka' }), '2025-06-02T03:00:00Z')).toBe(false);
  });

  it('is open at both ends: inactive at the fire instant and at fire + duration', () => {
    const w = win('deny', '0 10 * * *', '1h');
    expect(activeAt(w, '2025-06-02T10:00:00.000Z')).toBe(false);
    expect(activeAt(w, '2025-06-02T10:00:00.001Z')).toBe(true);
    expect(activeAt(w, '2025-06-02T10:59:59.999Z')).toBe(true);
    expect(activeAt(w, '2025-06-02T11:00:00.000Z')).toBe(false);
  });

  it('"* 10 * * *" for 2h fires every minute of 10h: active until 12:59', () => {
    const r = evaluateSyncWindows([win('deny', '* 10 * * *', '2h')], at('2025-06-02T11:00:00Z'));
    expect(r.active[0]?.until).toEqual(at('2025-06-02T12:59:00Z'));
    expect(r.nextChange).toEqual(at('2025-06-02T12:59:00Z'));
  });

  it('a schedule that never fires within five years is active for good (robfig zero time)', () => {
    const r = evaluateSyncWindows([win('deny', '0 0 30 2 *', '1h')], at('2025-06-02T11:00:00Z'));
    expect(r).toMatchObject({
      automated: 'blocked',
      manual: 'blocked',
      active: [{ window: { schedule: '0 0 30 2 *' } }],
    });
    expect(r.active[0]?.until).toBeUndefined();
    expect(r.nextChange).toBeUndefined();
  });

  it('ORs day-of-month and day-of-week like robfig: "0 0 1 * 1" covers Saturday 1 February', () => {
    const w = win('deny', '0 0 1 * 1', '1h');
    expect(activeAt(w, '2025-02-01T00:30:00Z')).toBe(true);
    expect(activeAt(w, '2025-02-03T00:30:00Z')).toBe(true);
    expect(activeAt(w, '2025-02-04T00:30:00Z')).toBe(false);
    expect(activeAt(win('deny', '0 0 */1 * 1', '1h'), '2025-02-01T00:30:00Z')).toBe(false); // star bit: AND
  });
});

describe('time zones (scheduleOffsetByTimeZone: the offset the zone has at the evaluated instant)', () => {
  const friday = win('deny', '0 16 * * 5', '8h', { timeZone: 'Europe/Berlin', description: 'weekend freeze' });

  it('Friday 16:00 Berlin for 8h, in winter (CET, UTC+1) and in summer (CEST, UTC+2)', () => {
    expect(evaluateSyncWindows([friday], at('2025-03-21T14:59:00Z'))).toMatchObject({
      automated: 'allowed',
      nextChange: at('2025-03-21T15:00:00Z'),
    });
    const winter = evaluateSyncWindows([friday], at('2025-03-21T15:30:00Z'));
    expect(winter).toMatchObject({
      automated: 'blocked',
      blockedBy: { window: friday, until: at('2025-03-21T23:00:00Z') },
    });
    const summer = evaluateSyncWindows([friday], at('2025-04-04T14:30:00Z'));
    expect(summer.blockedBy?.until).toEqual(at('2025-04-04T22:00:00Z'));
    expect(activeAt(friday, '2025-04-04T14:59:00Z')).toBe(true); // 16:59 CEST
    expect(activeAt(friday, '2025-03-21T14:59:00Z')).toBe(false); // 15:59 CET
  });

  it('before the spring change, the next Friday window is found at its summer time', () => {
    expect(evaluateSyncWindows([friday], at('2025-03-28T12:00:00Z')).nextChange).toEqual(at('2025-03-28T15:00:00Z'));
    expect(evaluateSyncWindows([friday], at('2025-03-29T12:00:00Z')).nextChange).toEqual(at('2025-04-04T14:00:00Z'));
  });

  it('a window across the spring change ends by the wall clock: 22:00 + 6h lasts 5 real hours', () => {
    const sat = win('deny', '0 22 * * 6', '6h', { timeZone: 'Europe/Berlin' });
    expect(activeAt(sat, '2025-03-29T21:30:00Z')).toBe(true);
    const r = evaluateSyncWindows([sat], at('2025-03-30T01:30:00Z'));
    expect(r.active[0]?.until).toEqual(at('2025-03-30T02:00:00Z')); // 04:00 CEST
  });

  it('a window ending in the repeated autumn hour becomes active again when the clock goes back', () => {
    // Sunday 00:30 Berlin for 2h: ends at 02:30 CEST (00:30 UTC); at 01:00 UTC the clock reads 02:00 CET again
    const sun = win('deny', '30 0 * * 0', '2h', { timeZone: 'Europe/Berlin' });
    expect(evaluateSyncWindows([sun], at('2025-10-26T00:00:00Z')).active[0]?.until).toEqual(at('2025-10-26T00:30:00Z'));
    expect(evaluateSyncWindows([sun], at('2025-10-26T00:45:00Z'))).toMatchObject({
      automated: 'allowed',
      nextChange: at('2025-10-26T01:00:00Z'),
    });
    expect(evaluateSyncWindows([sun], at('2025-10-26T01:15:00Z')).active[0]?.until).toEqual(at('2025-10-26T01:30:00Z'));
  });

  it('an unknown time zone is UTC with a warning, as Argo CD logs and goes on', () => {
    const w = win('deny', '0 16 * * 5', '8h', { timeZone: 'Mars/Olympus' });
    const r = evaluateSyncWindows([w], at('2025-03-21T16:30:00Z'));
    expect(r).toMatchObject({ automated: 'blocked', invalid: [], warnings: [{ window: w }] });
  });
});

describe('CanSync', () => {
  // TestSyncWindows_CanSync's projectBuilder: active = "* * * * *", inactive = 10 hours ahead, 1h each
  const now = at('2025-06-02T12:00:00Z');
  const active = (kind: 'allow' | 'deny', manualSync: boolean) => win(kind, '* * * * *', '1h', { manualSync });
  const inactive = (kind: 'allow' | 'deny', manualSync: boolean) => win(kind, '0 22 * * *', '1h', { manualSync });
  const manual3 = [active('deny', true), active('deny', true), active('deny', true)];
  it.each([
    ['inactive deny (manual)', 'allowed', 'allowed', [inactive('deny', true)]],
    ['inactive deny', 'allowed', 'allowed', [inactive('deny', false)]],
    ['inactive allows, one without manual', 'blocked', 'blocked', [inactive('allow', true), inactive('allow', false)]],
    ['active allow (manual)', 'allowed', 'allowed', [active('allow', true)]],
    ['active allow', 'allowed', 'allowed', [active('allow', false)]],
    ['active allow + inactive deny', 'allowed', 'allowed', [active('allow', false), inactive('deny', false)]],
    ['inactive allow', 'blocked', 'blocked', [inactive('allow', false)]],
    ['inactive allow (manual)', 'blocked', 'allowed', [inactive('allow', true)]],
    ['inactive allow + inactive deny', 'blocked', 'blocked', [inactive('allow', false), inactive('deny', false)]],
    ['active allow + inactive allow', 'allowed', 'allowed', [active('allow', false), inactive('allow', false)]],
    ['active deny', 'blocked', 'blocked', [active('deny', false)]],
    ['active deny (manual)', 'blocked', 'allowed', [active('deny', true)]],
    ['3 active denies (manual) + 1 without', 'blocked', 'blocked', [...manual3, active('deny', false)]],
    ['active allow + active deny', 'blocked', 'blocked', [active('allow', false), active('deny', false)]],
    ['active allow + active deny (manual)', 'blocked', 'allowed', [active('allow', false), active('deny', true)]],
    ['no windows', 'allowed', 'allowed', []],
  ] as const)('%s → automated %s, manual %s', (_, automated, manual, windows) =>
    expect(evaluateSyncWindows(windows, now)).toMatchObject({ automated, manual, invalid: [] }),
  );

  it('two active denies, only one with manualSync: a manual sync is refused (hasDeny ANDs manualSync)', () => {
    const a = win('deny', '0 9 * * *', '8h', { manualSync: true });
    const b = win('deny', '0 11 * * *', '2h');
    expect(evaluateSyncWindows([a, b], at('2025-06-02T12:00:00Z'))).toMatchObject({ manual: 'blocked' });
    // once b has ended, a alone lets manual syncs through
    expect(evaluateSyncWindows([a, b], at('2025-06-02T13:30:00Z'))).toMatchObject({
      automated: 'blocked',
      manual: 'allowed',
      blockedBy: { window: a, until: at('2025-06-02T17:00:00Z') },
    });
  });

  it('inactive allow windows block automated syncs until one opens', () => {
    const office = win('allow', '0 9 * * 1-5', '8h');
    const r = evaluateSyncWindows([office], at('2025-06-07T12:00:00Z')); // a Saturday
    expect(r).toMatchObject({ automated: 'blocked', active: [] });
    expect(r.blockedBy).toEqual({ window: office, until: at('2025-06-09T09:00:00Z') });
    expect(r.nextChange).toEqual(at('2025-06-09T09:00:00Z'));
    expect(evaluateSyncWindows([office], at('2025-06-09T10:00:00Z')).nextChange).toEqual(at('2025-06-09T17:00:00Z'));
  });

  it('nextChange is when the answer changes, not when a window does', () => {
    const office = win('allow', '0 9 * * 1-5', '8h');
    const deny = win('deny', '0 6 * * *', '2h');
    const r = evaluateSyncWindows([office, deny], at('2025-06-09T07:00:00Z'));
    expect(r.blockedBy).toEqual({ window: deny, until: at('2025-06-09T08:00:00Z') });
    expect(r.nextChange).toEqual(at('2025-06-09T09:00:00Z')); // 8:00 → 9:00 still outside the allow window
  });

  it('a deny that fires every minute for an hour is one unbroken block', () => {
    const r = evaluateSyncWindows([win('deny', '* * * * *', '1h')], at('2025-06-02T12:00:00Z'));
    expect(r.automated).toBe('blocked');
    expect(r.blockedBy?.until).toBeUndefined();
    expect(r.nextChange).toBeUndefined();
  });
});

describe('invalid windows (CanSync returns an error: Argo CD refuses both syncs)', () => {
  it.each([
    [win('allow', '* 10 * * 7', '1h'), /cannot parse schedule/], // withInvalidWindows
    [win('deny', '@daily', '1h'), /does not accept descriptors/],
    [win('allow', 'invalid-cron-schedule', '1h'), /cannot parse schedule/],
    [win('allow', '0 22 * * *', 'invalid-duration'), /cannot parse duration/],
    [win('deny', '* 10 * * *', '3a'), /cannot parse duration/],
  ])('%j', (bad, reason) => {
    const ok = win('allow', '* * * * *', '1h');
    const r = evaluateSyncWindows([ok, bad], at('2025-06-02T12:00:00Z'));
    expect(r).toMatchObject({ automated: 'unknown', manual: 'unknown', invalid: [{ window: bad }] });
    expect(r.invalid[0]?.reason).toMatch(reason);
    expect(r.active).toEqual([{ window: ok, until: undefined }]); // still reported: not within 7 days
    expect(r.blockedBy).toBeUndefined();
  });
});

describe('syncWindowStretches (a calendar of when one window is active)', () => {
  const t = (iso: string) => Date.parse(iso);
  const iso = (s: { from: number; until: number }) => [new Date(s.from).toISOString(), new Date(s.until).toISOString()];

  it('lists each occurrence in the range, the first and last clipped to it', () => {
    const r = syncWindowStretches(
      win('deny', '0 22 * * *', '4h'),
      t('2026-03-01T23:00:00Z'),
      t('2026-03-03T23:00:00Z'),
    );
    expect(r.stretches.map(iso)).toEqual([
      ['2026-03-01T23:00:00.000Z', '2026-03-02T02:00:00.000Z'],
      ['2026-03-02T22:00:00.000Z', '2026-03-03T02:00:00.000Z'],
      ['2026-03-03T22:00:00.000Z', '2026-03-03T23:00:00.000Z'],
    ]);
    expect(r.truncated).toBe(false);
  });

  it('agrees with the evaluation just inside and just outside each stretch', () => {
    const w = win('deny', '0 16 * * 5', '8h', { timeZone: 'Europe/Berlin' });
    const r = syncWindowStretches(w, t('2026-03-01T00:00:00Z'), t('2026-04-15T00:00:00Z'));
    expect(r.stretches).toHaveLength(6);
    for (const s of r.stretches) {
      expect(evaluateSyncWindows([w], new Date(s.from + 1000)).active).toHaveLength(1);
      expect(evaluateSyncWindows([w], new Date(s.until + 1000)).active).toHaveLength(0);
      expect(evaluateSyncWindows([w], new Date(s.from - 1000)).active).toHaveLength(0);
    }
    // the spring change (29 March): the Friday windows after it start at 14:00 UTC, before it at 15:00
    expect(new Date(r.stretches[0]!.from).toISOString()).toBe('2026-03-06T15:00:00.000Z');
    expect(new Date(r.stretches.at(-1)!.from).toISOString()).toBe('2026-04-10T14:00:00.000Z');
  });

  it('a minutely deny is one unbroken stretch; the cap says when it cut the list', () => {
    const one = syncWindowStretches(
      win('deny', '* 10 * * *', '2h'),
      t('2026-03-02T00:00:00Z'),
      t('2026-03-03T00:00:00Z'),
    );
    expect(one.stretches.map(iso)).toEqual([['2026-03-02T10:00:00.000Z', '2026-03-02T12:59:00.000Z']]);
    const capped = syncWindowStretches(
      win('allow', '0 * * * *', '10m'),
      t('2026-03-02T00:00:00Z'),
      t('2026-03-03T00:00:00Z'),
      5,
    );
    expect(capped.stretches).toHaveLength(5);
    expect(capped.truncated).toBe(true);
  });

  it('a window Argo CD cannot parse is an error, not an empty calendar', () => {
    const r = syncWindowStretches(
      win('deny', '0 25 * * *', '1h'),
      t('2026-03-02T00:00:00Z'),
      t('2026-03-03T00:00:00Z'),
    );
    expect(r.stretches).toEqual([]);
    expect(r.error).toMatch(/cannot parse schedule/);
  });
});
