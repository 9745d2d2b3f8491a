// "Merged, but not live — why?" on the timeline of release.ts, refined with the app's live conditions.
import { describe, expect, it } from 'vitest';
import { freezeHoldLine, heldByFreeze, releaseLiveness, whyNotLive } from './release-not-live.ts';
import { windowActorName, windowOfActor } from './window-actor.ts';
import { buildReleases } from './release.ts';

import { D2, SHA2, releaseEventMaker, twoReleases } from './fixtures/release-events.ts';

describe('merged, but not live', () => {
  const events = twoReleases();
  it('"merged, but not live": the controller\'s own words, an unreachable cluster, a suspended app', () => {
    const [newest] = buildReleases(events);
    const app = {
      sync: 'OutOfSync',
      health: 'Degraded',
      healthMessage: 'HPA',
      conditions: [
        { type: 'Ready', status: 'False', reason: 'BuildFailed', message: 'kustomize build failed: missing.yaml' },
      ],
      source: { revisionAttempted: `main@sha1:${SHA2}`, sourceReady: 'True (Succeeded)' },
      automation: { suspended: false },
      clusterReachable: true,
    };
    expect(whyNotLive(newest, app)).toEqual({
      state: 'render',
      why: 'render failed (BuildFailed): kustomize build failed: missing.yaml',
    });
    expect(whyNotLive(newest, { ...app, clusterReachable: false })?.why).toMatch(/unreachable/);
    expect(whyNotLive(newest, { ...app, automation: { suspended: true } })?.why).toMatch(/suspended/);
    expect(
      whyNotLive(newest, { ...app, conditions: [], source: { sourceReady: 'False (GitOperationFailed)' } }),
    ).toEqual({
      state: 'render',
      why: 'failed: render failed: missing.yaml: no such file',
    });
  });

  it('held for a dependency: the reconcile state says on what, in the line the app header shows', () => {
    const [newest] = buildReleases(events);
    const waiting = {
      sync: 'OutOfSync',
      health: 'Unknown',
      healthMessage: '',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'DependencyNotReady',
          message: "dependency 'flux-system/infra-dev' is not ready",
        },
      ],
      source: { sourceReady: 'True (Succeeded)' },
      automation: { suspended: false },
      clusterReachable: true,
      waitingOn: 'waiting on infra-dev (not Ready: ReconciliationFailed — NetworkPolicy invalid)',
    };
    expect(whyNotLive(newest, waiting)).toEqual({
      state: 'reconcile',
      why: 'waiting on infra-dev (not Ready: ReconciliationFailed — NetworkPolicy invalid)',
    });
    // no line (the dependency is Ready again): the recorder's own pending state
    const { waitingOn: _line, ...ready } = waiting;
    expect(whyNotLive(newest, ready)?.why).not.toMatch(/waiting on infra-dev/);
  });
});

describe('releaseLiveness: one set of words for whether a release runs', () => {
  const st = (over: Record<string, 'ok' | 'failed' | 'pending' | 'unknown'>) => ({
    states: (['change', 'review', 'reconcile', 'health', 'verification'] as const).map((name) => ({
      name,
      step: 1,
      status: over[name] ?? 'ok',
      ...(over[name] === 'failed' ? { why: `${name} failed: because` } : {}),
    })),
  });
  it('applied and verified: live', () => {
    expect(releaseLiveness(st({}), undefined)).toEqual({ headline: 'live: applied, healthy and verified', tone: 'ok' });
  });
  it('live whose review failed says so, never "every state completed"', () => {
    expect(releaseLiveness(st({ review: 'failed' }), undefined)).toEqual({
      headline: 'live, but not reviewed: review failed: because',
      tone: 'warn',
    });
  });
  it('applied, then its verification failed: live, but failing — not "not live"', () => {
    const r = st({ verification: 'failed' });
    expect(releaseLiveness(r, { state: 'verification', why: 'failed: HTTP 503' }).headline).toBe(
      'Live, but its verification failed — why?',
    );
    expect(
      releaseLiveness(st({ health: 'pending', verification: 'pending' }), { state: 'health', why: 'pending: x' })
        .headline,
    ).toBe('Live, but its health is not done — why?');
  });
  it('stopped before the reconcile: merged, but not live', () => {
    expect(
      releaseLiveness(st({ reconcile: 'failed' }), { state: 'reconcile', why: 'failed: BuildFailed' }).headline,
    ).toBe('Merged, but not live — why?');
  });
});

describe('held by the prune policy (issue 39, item 6)', () => {
  it('the reconcile state is held (not failed), and every screen says "held by the prune policy"', () => {
    const ev = releaseEventMaker();
    const line = 'held by the prune policy: deleting ConfigMap/render-worker-config needs an approved prune preview';
    const events = [
      ...twoReleases(ev).filter((e) => !(e.data.sha === SHA2 && e.type !== 'release.change')),
      ev('release.artifact', SHA2, { artifactDigest: D2 }),
      ev('release.render', SHA2, { renderHash: 'e'.repeat(64), objects: 8 }),
      ev('release.validation', SHA2, { accepted: 8, rejected: 0 }),
      ev('release.reconcile', SHA2, {
        status: 'held',
        reason: line,
        held: { objects: ['ConfigMap/render-worker-config'], count: 1 },
      }),
    ];
    const [newest] = buildReleases(events);
    const reconcile = newest?.states.find((s) => s.name === 'reconcile');
    expect(reconcile).toMatchObject({ status: 'held', why: line });
    expect(newest?.states.find((s) => s.name === 'health')?.why).toMatch(/^waits for the prune approval/);
    expect(newest?.blocked).toEqual({ state: 'reconcile', why: line });
    const app = {
      sync: 'OutOfSync',
      health: 'Degraded',
      healthMessage: line,
      conditions: [{ type: 'Ready', status: 'False', reason: 'PruneFailed', message: 'prune of ConfigMap/…' }],
      source: { revisionAttempted: `main@sha1:${SHA2}`, sourceReady: 'True (Succeeded)' },
      automation: { suspended: false },
      clusterReachable: true,
      pruneHold: { objects: ['ConfigMap/render-worker-config'], count: 1 },
    };
    const notLive = whyNotLive(newest, app);
    // never "the controller failed (PruneFailed)"
    expect(notLive).toEqual({ state: 'reconcile', why: line });
    expect(releaseLiveness(newest as NonNullable<typeof newest>, notLive)).toMatchObject({
      headline: 'Merged, but held by the prune policy — why?',
      tone: 'warn',
    });
  });
});

describe('held by a freeze or a planned window (issue 43)', () => {
  const ev = releaseEventMaker();
  // the newest release: its commit, artifact and render recorded, its reconcile not (the controller is paused)
  const events = [
    ...twoReleases(ev).filter((e) => !(e.data.sha === SHA2 && e.type !== 'release.change')),
    ev('release.artifact', SHA2, { artifactDigest: D2 }),
    ev('release.render', SHA2, { renderHash: 'e'.repeat(64), objects: 8 }),
    ev('release.validation', SHA2, { accepted: 8, rejected: 0 }),
  ];
  const until = '2027-01-03T00:00:00.000Z';
  const byWindow = { by: windowActorName('holiday-freeze'), reason: 'holiday-freeze: year end', until };
  const byPerson = { by: 'oncall', reason: 'INC-7 db failover', until };
  const app = {
    sync: 'OutOfSync',
    health: 'Healthy',
    healthMessage: '',
    conditions: [],
    source: { sourceReady: 'True (Succeeded)' },
    automation: { suspended: true },
    clusterReachable: true,
  };

  it("a window's freeze is read back from its actor; a person's is not a window", () => {
    expect(windowOfActor(byWindow.by)).toBe('holiday-freeze');
    expect(windowOfActor('oncall')).toBeUndefined();
    expect(windowOfActor('console (window Bad Name)')).toBeUndefined();
    expect(freezeHoldLine(byWindow)).toBe('held by window holiday-freeze until 2027-01-03T00:00:00Z');
    expect(freezeHoldLine(byPerson)).toBe('held by a freeze until 2027-01-03T00:00:00Z (oncall: INC-7 db failover)');
  });

  it("the newest release's reconcile is held by the window, not pending, and every screen says so", () => {
    const plain = buildReleases(events);
    expect(plain[0]?.states.find((s) => s.name === 'reconcile')?.status).toBe('pending');
    const [newest, older] = heldByFreeze(plain, byWindow);
    const why = 'held by window holiday-freeze until 2027-01-03T00:00:00Z';
    expect(newest?.states.find((s) => s.name === 'reconcile')).toMatchObject({ status: 'held', why });
    expect(newest?.blocked).toEqual({ state: 'reconcile', why });
    // the older release is as it was
    expect(older).toEqual(plain[1]);
    const notLive = whyNotLive(newest, { ...app, freeze: byWindow });
    expect(notLive).toEqual({ state: 'reconcile', why });
    expect(releaseLiveness(newest as NonNullable<typeof newest>, notLive).headline).toBe(
      'Merged, but held by a planned freeze window — why?',
    );
    // a person's freeze: its own words
    const [held] = heldByFreeze(plain, byPerson);
    const personal = whyNotLive(held, { ...app, freeze: byPerson });
    expect(personal?.why).toBe('held by a freeze until 2027-01-03T00:00:00Z (oncall: INC-7 db failover)');
    expect(releaseLiveness(held as NonNullable<typeof held>, personal).headline).toBe(
      'Merged, but held by a freeze — why?',
    );
  });

  it('not frozen, or already applied: nothing is held', () => {
    const plain = buildReleases(events);
    expect(heldByFreeze(plain, undefined)).toBe(plain);
    const applied = buildReleases([...events, ev('release.reconcile', SHA2, { status: 'ok' })]);
    expect(heldByFreeze(applied, byWindow)).toBe(applied);
    // unfrozen: the suspension's own line, never a freeze's
    expect(whyNotLive(plain[0], app)?.why).toMatch(/suspended/);
  });
});
