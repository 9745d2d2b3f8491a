import { describe, expect, it } from 'vitest';
import {
  envReleaseMetrics,
  nearestRank,
  releaseMetrics,
  utcDays,
  type MetricsEvent,
  type MetricsOptions,
} from './release-metrics.ts';

const APP = 'nonprod/flux-system/kustomization/digital-human-dev';
const OTHER = 'nonprod/argocd/application/tts-gateway-dev';
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const OPTS: MetricsOptions = { from: '2026-12-01T00:00:00.000Z', to: '2026-12-03T23:59:59.999Z' };

let seq = 0;
function ev(
  type: string,
  time: string,
  data: Record<string, unknown> = {},
  over: Partial<MetricsEvent> = {},
): MetricsEvent {
  return { seq: ++seq, time, type, app: APP, cluster: 'nonprod', env: 'dev', data, ...over };
}
/** change → ok reconcile → health of one release (times on 2026-12-dd) */
function release(
  sha: string,
  at: string,
  health: { health: string; secondsAfterCommit?: number; status?: string } = { health: 'Healthy' },
  over: Partial<MetricsEvent> = {},
  subject = 'Bump the render worker',
): MetricsEvent[] {
  const t = Date.parse(at);
  const iso = (ms: number) => new Date(t + ms).toISOString();
  return [
    ev('release.change', iso(-60_000), { sha, subject }, over),
    ev(
      'release.reconcile',
      at,
      { sha, status: 'ok', appliedRevision: `main@sha1:${sha}`, secondsAfterCommit: 60 },
      over,
    ),
    ev('release.health', iso(10_000), { sha, secondsAfterCommit: 70, ...health }, over),
  ];
}

describe('nearestRank', () => {
  it.each([
    [[], 50, null],
    [[5], 50, 5],
    [[5], 90, 5],
    [[3, 1, 2], 50, 2],
    [[1, 2, 3, 4], 50, 2],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 90, 10],
    [[10, 20], 90, 20],
    [[7, 7, 100], 50, 7],
  ])('%j p%i → %j', (values, p, want) => {
    expect(nearestRank(values, p)).toBe(want);
  });
});

describe('utcDays', () => {
  it.each([
    ['2026-12-01T00:00:00.000Z', '2026-12-01T23:59:59.999Z', ['2026-12-01']],
    ['2026-12-30T22:00:00.000Z', '2027-01-01T01:00:00.000Z', ['2026-12-30', '2026-12-31', '2027-01-01']],
    ['2026-12-02T00:00:00.000Z', '2026-12-01T00:00:00.000Z', []],
  ])('%s … %s', (from, to, want) => {
    expect(utcDays(from, to)).toEqual(want);
  });
});

describe('envReleaseMetrics', () => {
  it('no records for the environment: every rate is unknown, never 0 %', () => {
    const m = envReleaseMetrics(
      'dev',
      [ev('release.reconcile', '2026-12-01T10:00:00.000Z', { sha: A }, { env: 'prod' })],
      OPTS,
    );
    expect(m.records).toBe(0);
    expect(m.changeFailureRate).toEqual({ failed: 0, total: 0, rate: null, open: 0 });
    expect(m.leadTime).toEqual({ median: null, p90: null, n: 0, heldByWindowSeconds: 0 });
    expect(m.days.map((d) => d.day)).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
    expect(m.days.every((d) => d.records === 0 && d.deployments === 0)).toBe(true);
    expect(m.releases).toEqual([]);
  });

  // one table row per rule: the events, then deployments, failures, failure reasons (prefix) and the lead time n
  const cases: Array<{
    name: string;
    events: () => MetricsEvent[];
    deployments: number;
    failed: number;
    reasons?: RegExp;
    leads?: number;
  }> = [
    {
      name: 'a healthy release is one deployment with its lead time, not a failure',
      events: () => release(A, '2026-12-01T10:00:00.000Z', { health: 'Healthy', secondsAfterCommit: 120 }),
      deployments: 1,
      failed: 0,
      leads: 1,
    },
    {
      name: 'no ok reconcile: not deployed',
      events: () => [
        ev('release.change', '2026-12-01T10:00:00.000Z', { sha: A, subject: 'x' }),
        ev('release.reconcile', '2026-12-01T10:01:00.000Z', { sha: A, status: 'failed', reason: 'BuildFailed' }),
      ],
      deployments: 0,
      failed: 0,
    },
    {
      name: 'unknown reconcile: not deployed',
      events: () => [ev('release.reconcile', '2026-12-01T10:01:00.000Z', { sha: A, status: 'unknown' })],
      deployments: 0,
      failed: 0,
    },
    {
      name: 'Degraded health within the window: a failure, no lead time',
      events: () => release(A, '2026-12-01T10:00:00.000Z', { health: 'Degraded', status: 'failed' }),
      deployments: 1,
      failed: 1,
      reasons: /^health Degraded/,
      leads: 0,
    },
    {
      name: 'a failed verification of its sha within the window: a failure',
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ev('release.verification', '2026-12-01T12:00:00.000Z', { sha: A, status: 'failed', reason: 'HTTP 503' }),
      ],
      deployments: 1,
      failed: 1,
      reasons: /^verification failed: HTTP 503/,
      leads: 1,
    },
    {
      name: 'a failed verification after the window: not a failure',
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ev('release.verification', '2026-12-02T10:00:01.000Z', { sha: A, status: 'failed', periodic: true }),
      ],
      deployments: 1,
      failed: 0,
    },
    {
      name: "another sha's failed verification: not this release's failure",
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ev('release.verification', '2026-12-01T11:00:00.000Z', { sha: B, status: 'failed' }),
      ],
      deployments: 1,
      failed: 0,
    },
    {
      name: 'the next release is a revert within the window: the first one failed, the revert did not',
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ...release(B, '2026-12-01T11:00:00.000Z', undefined, {}, 'Revert "Bump the render worker"'),
      ],
      deployments: 2,
      failed: 1,
      reasons: /^reverted by bbbbbbb/,
    },
    {
      name: 'a revert two releases later: not the next release, not counted',
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ...release(B, '2026-12-01T11:00:00.000Z'),
        ...release(C, '2026-12-01T12:00:00.000Z', undefined, {}, 'Revert "Bump the render worker"'),
      ],
      deployments: 3,
      failed: 1,
      reasons: /^reverted by ccccccc/,
    },
    {
      name: 'a release.rollback-requested record for the app within the window: a failure',
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ev('release.rollback-requested', '2026-12-01T10:30:00.000Z', { to: B }),
      ],
      deployments: 1,
      failed: 1,
      reasons: /^rolled back \(release.rollback-requested\)/,
    },
    {
      name: "another app's rollback: not this release's failure",
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ev('release.rollback-requested', '2026-12-01T10:30:00.000Z', {}, { app: OTHER }),
      ],
      deployments: 1,
      failed: 0,
    },
    {
      name: 'records of new types (review, validation, promotion, gap) are ignored',
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ev('release.review', '2026-12-01T09:00:00.000Z', { sha: A, status: 'failed' }),
        ev('release.validation', '2026-12-01T09:30:00.000Z', { sha: A, status: 'failed' }),
        ev('release.promotion', '2026-12-01T10:30:00.000Z', { sha: A, status: 'failed' }),
        ev('release.gap', '2026-12-01T10:40:00.000Z', { status: 'unknown' }),
      ],
      deployments: 1,
      failed: 0,
    },
    {
      name: 'deployed before the range: not counted',
      events: () => release(A, '2026-11-30T23:59:00.000Z'),
      deployments: 0,
      failed: 0,
    },
    {
      name: 'a second ok reconcile of the same sha is the same deployment',
      events: () => [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ev('release.reconcile', '2026-12-02T10:00:00.000Z', { sha: A, status: 'ok' }),
      ],
      deployments: 1,
      failed: 0,
    },
  ];

  it.each(cases)('$name', ({ events, deployments, failed, reasons, leads }) => {
    const m = envReleaseMetrics('dev', events(), OPTS);
    expect(m.changeFailureRate.total).toBe(deployments);
    expect(m.changeFailureRate.failed).toBe(failed);
    expect(m.changeFailureRate.rate).toBe(deployments ? failed / deployments : null);
    expect(m.days.reduce((n, d) => n + d.deployments, 0)).toBe(deployments);
    expect(m.days.reduce((n, d) => n + d.failures, 0)).toBe(failed);
    if (reasons) expect(m.releases.flatMap((r) => r.failures).join('\n')).toMatch(reasons);
    if (leads !== undefined) expect(m.leadTime.n).toBe(leads);
  });

  it('lead time: nearest-rank median and p90 of the Healthy releases in seconds', () => {
    const leads = [30, 10, 50, 20, 40];
    const events = leads.flatMap((s, i) =>
      release(String(i).repeat(40), `2026-12-02T0${i}:00:00.000Z`, { health: 'Healthy', secondsAfterCommit: s }),
    );
    const m = envReleaseMetrics('dev', events, OPTS);
    expect(m.leadTime).toEqual({ median: 30, p90: 50, n: 5, heldByWindowSeconds: 0 });
    expect(m.days.find((d) => d.day === '2026-12-02')?.deployments).toBe(5);
    // newest first
    expect(m.releases.map((r) => r.leadTimeSeconds)).toEqual([40, 20, 50, 10, 30]);
  });

  it('drift and freeze events per day, and their totals by type', () => {
    const m = envReleaseMetrics(
      'dev',
      [
        ev('drift.detected', '2026-12-01T01:00:00.000Z'),
        ev('drift.reverted', '2026-12-01T02:00:00.000Z'),
        ev('drift.adopted', '2026-12-03T02:00:00.000Z'),
        ev('freeze.started', '2026-12-02T02:00:00.000Z', {}, { app: null }),
        ev('freeze.extended', '2026-12-02T03:00:00.000Z', {}, { app: null }),
        ev('freeze.expired', '2026-12-03T03:00:00.000Z', {}, { app: null }),
        ev('freeze.write-back', '2026-12-03T03:00:00.000Z', {}, { app: null }),
        ev('drift.detected', '2026-12-05T01:00:00.000Z'), // after the range
      ],
      OPTS,
    );
    expect(m.days.map((d) => [d.day, d.drifts, d.freezes])).toEqual([
      ['2026-12-01', 2, 0],
      ['2026-12-02', 0, 2],
      ['2026-12-03', 1, 1],
    ]);
    expect(m.eventCounts).toEqual({
      'drift.detected': 1,
      'drift.reverted': 1,
      'drift.adopted': 1,
      'freeze.started': 1,
      'freeze.extended': 1,
      'freeze.expired': 1,
    });
    expect(m.records).toBe(7);
    expect(m.changeFailureRate.rate).toBeNull(); // records, but no deployment: still unknown
  });

  it('a deployment whose failure window is still open at `to` is counted and said to be open', () => {
    const m = envReleaseMetrics('dev', release(A, '2026-12-03T20:00:00.000Z'), OPTS);
    expect(m.changeFailureRate).toEqual({ failed: 0, total: 1, rate: 0, open: 1 });
    expect(m.releases[0]?.windowOpen).toBe(true);
  });

  it('the failure window is configurable', () => {
    const events = [
      ...release(A, '2026-12-01T10:00:00.000Z'),
      ev('release.verification', '2026-12-01T13:00:00.000Z', { sha: A, status: 'failed' }),
    ];
    expect(envReleaseMetrics('dev', events, { ...OPTS, failureWindowHours: 2 }).changeFailureRate.failed).toBe(0);
    expect(envReleaseMetrics('dev', events, { ...OPTS, failureWindowHours: 4 }).changeFailureRate.failed).toBe(1);
  });

  it('a commit that left the render as the running release is no deployment: counted apart, its failures are the running release', () => {
    const events = [
      ...release(A, '2026-12-01T10:00:00.000Z'),
      // B: another app's commit in the same repository, rendered exactly as A here
      ev('release.render', '2026-12-01T11:00:00.000Z', { sha: B, effect: 'unchanged', sameAs: A }),
      ...release(
        B,
        '2026-12-01T11:00:30.000Z',
        { health: 'Degraded', status: 'failed' },
        {},
        'Revert "Bump the render worker"',
      ).map((e) => (e.type === 'release.change' ? e : { ...e, data: { ...e.data, unchangedFrom: A } })),
      ...release(C, '2026-12-01T12:00:00.000Z'),
    ];
    const m = envReleaseMetrics('dev', events, OPTS);
    expect(m.releases.map((r) => r.sha).sort()).toEqual([A, C].sort());
    expect(m.unchanged).toBe(1);
    expect(m.days.find((d) => d.day === '2026-12-01')?.deployments).toBe(2);
    // Degraded while B was newest: A (what ran) failed; B's "Revert" subject is not a revert of anything here
    const a = m.releases.find((r) => r.sha === A);
    expect(a?.failed).toBe(true);
    expect(a?.failures).toEqual([expect.stringMatching(/^health Degraded/)]);
    expect(m.changeFailureRate).toMatchObject({ failed: 1, total: 2 });
  });

  it('releases are per app: the same sha in two apps is two deployments', () => {
    const m = envReleaseMetrics(
      'dev',
      [...release(A, '2026-12-01T10:00:00.000Z'), ...release(A, '2026-12-01T10:05:00.000Z', undefined, { app: OTHER })],
      OPTS,
    );
    expect(m.changeFailureRate.total).toBe(2);
    expect(new Set(m.releases.map((r) => r.app))).toEqual(new Set([APP, OTHER]));
  });
});

describe('releaseMetrics', () => {
  it('groups by environment and skips events without one', () => {
    const m = releaseMetrics(
      [
        ...release(A, '2026-12-01T10:00:00.000Z'),
        ...release(B, '2026-12-01T10:00:00.000Z', { health: 'Missing' }, { env: 'prod', app: 'prod/x/y/z' }),
        ev('console.started', '2026-12-01T09:00:00.000Z', {}, { env: null, app: null }),
      ],
      OPTS,
    );
    expect(Object.keys(m).sort()).toEqual(['dev', 'prod']);
    expect(m.dev?.changeFailureRate).toMatchObject({ failed: 0, total: 1, rate: 0 });
    expect(m.prod?.changeFailureRate).toMatchObject({ failed: 1, total: 1, rate: 1 });
  });
});

describe('canaries (issue 25)', () => {
  it('lead time ends at full promotion, not at the first Healthy', () => {
    const events = [
      ...release(A, '2026-12-02T10:00:00.000Z', { health: 'Healthy', secondsAfterCommit: 70 }),
      ev('release.verification', '2026-12-02T10:05:00.000Z', {
        sha: A,
        status: 'ok',
        canary: { outcomes: [], promotedSecondsAfterCommit: 360 },
      }),
    ];
    const m = envReleaseMetrics('dev', events, OPTS);
    expect(m.releases[0]?.leadTimeSeconds).toBe(360);
  });
  it('an aborted canary fails the release and counts in the change failure rate', () => {
    const events = [
      ...release(B, '2026-12-02T11:00:00.000Z'),
      ev('release.verification', '2026-12-02T11:02:00.000Z', {
        sha: B,
        status: 'failed',
        reason: 'canary staging/checkout aborted at step 3 of 5: analysis r business-endpoint error: 503',
        canary: { outcomes: [] },
      }),
    ];
    const m = envReleaseMetrics('dev', events, OPTS);
    expect(m.changeFailureRate).toMatchObject({ failed: 1, total: 1 });
    expect(m.releases[0]?.failures[0]).toMatch(/verification failed: canary staging\/checkout aborted.*503/);
    // an aborted canary was never promoted: its lead time is the first Healthy's (the one it had), not a promotion's
    expect(m.releases[0]?.leadTimeSeconds).toBe(70);
  });
});

describe('lead time without the time a planned window held the app (issue 43)', () => {
  it('a window freeze between the commit and Healthy is left out and said apart; a person’s freeze is not', () => {
    // commit at 10:00:00 (Healthy 70 s after it); a window froze the app 10:00:10–10:00:40 (30 s)
    const at = '2026-12-02T10:01:00.000Z';
    const events = [
      ev('freeze.started', '2026-12-02T09:59:30.000Z', { freezeId: 'p1', apps: [APP] }),
      ev('freeze.ended', '2026-12-02T09:59:50.000Z', { freezeId: 'p1' }),
      ev('freeze.started', '2026-12-02T10:00:10.000Z', { freezeId: 'w1', window: 'stop', apps: [APP] }),
      ev('freeze.expired', '2026-12-02T10:00:40.000Z', { freezeId: 'w1' }),
      // another app's window freeze in the same stretch: not this app's
      ev(
        'freeze.started',
        '2026-12-02T10:00:00.000Z',
        { freezeId: 'w2', window: 'stop', apps: [OTHER] },
        { app: OTHER },
      ),
      ...release(A, at, { health: 'Healthy', secondsAfterCommit: 70 }),
    ];
    const m = envReleaseMetrics('dev', events, OPTS);
    expect(m.releases.map((r) => [r.leadTimeSeconds, r.heldByWindowSeconds])).toEqual([[40, 30]]);
    expect(m.leadTime).toEqual({ median: 40, p90: 40, n: 1, heldByWindowSeconds: 30 });
  });

  it('a window still holding the app counts until the end of the range; no window, nothing left out', () => {
    const at = '2026-12-02T10:01:00.000Z';
    const held = envReleaseMetrics(
      'dev',
      [
        ev('freeze.started', '2026-12-02T09:00:00.000Z', { freezeId: 'w3', window: 'stop', apps: [APP] }),
        ...release(B, at, { health: 'Healthy', secondsAfterCommit: 70 }),
      ],
      OPTS,
    );
    expect(held.releases.map((r) => [r.leadTimeSeconds, r.heldByWindowSeconds])).toEqual([[0, 70]]);
    const plain = envReleaseMetrics('dev', release(C, at, { health: 'Healthy', secondsAfterCommit: 70 }), OPTS);
    expect(plain.leadTime).toEqual({ median: 70, p90: 70, n: 1, heldByWindowSeconds: 0 });
  });
});
