// The timeline: release evidence grouped per revision, newest first, its states' values, why and blocked state.
import { describe, expect, it } from 'vitest';
import { buildReleases } from './release.ts';

import { releaseEventMaker, SHA, SHA2, twoReleases } from './fixtures/release-events.ts';

describe('the timeline', () => {
  const ev = releaseEventMaker();
  const events = twoReleases(ev);
  it('groups states per revision, newest first, with values, actors and evidence links', () => {
    const [newest, older] = buildReleases(events);
    expect(newest?.sha).toBe(SHA2);
    expect(older?.sha).toBe(SHA);
    expect(older?.states.map((s) => s.status)).toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'unknown',
      'unknown',
      'pending',
    ]);
    expect(older?.states[0]).toMatchObject({ actor: 'Ann', value: 'first', seq: 1 });
    expect(older?.states[3]?.value).toBe(`${'f'.repeat(12)} · 9 objects`);
    expect(older?.states[5]?.value).toMatch(/12 s after the commit/);
    expect(older?.states[6]?.why).toMatch(/newer revision superseded/);
    expect(older?.states[1]).toMatchObject({ value: 'PR #7 approved by rita, sam', actor: 'rita' });
    expect(older?.states[4]?.value).toBe('9 accepted · 0 rejected');
    expect(older?.states[8]?.why).toMatch(/next environment/);
    expect(older?.blocked).toBeUndefined();
    expect(newest?.blocked).toEqual({ state: 'render', why: 'failed: render failed: missing.yaml: no such file' });
    expect(newest?.states[6]).toMatchObject({
      status: 'pending',
      why: 'not reached: the reconcile did not apply this revision',
    });
  });
  it('the newest record of a state wins (a failed reconcile that later applied)', () => {
    const [r] = buildReleases([
      ev('release.reconcile', SHA, { status: 'failed', reason: 'x' }),
      ev('release.reconcile', SHA, { appliedRevision: 'r' }),
    ]);
    expect(r?.states[5]?.status).toBe('ok');
  });
  it('a promotion recorded on an earlier release shows on that row, even after a newer release', () => {
    const [newer, older] = buildReleases([
      ev('release.change', SHA, {}),
      ev('release.change', SHA2, {}),
      ev('release.promotion', SHA, { toEnv: 'staging', secondsAfter: 61.2 }),
    ]);
    expect(newer?.states[8]?.status).toBe('pending');
    expect(older?.states[8]).toMatchObject({ status: 'ok', value: 'reached staging 61 s later' });
  });
  it('commits that changed nothing here: the release they render as is still followed (pending), not superseded', () => {
    const SHA3 = '3'.repeat(40);
    const releases = buildReleases([
      ev('release.render', SHA, { renderHash: 'sha256:1', objects: 1 }),
      ev('release.reconcile', SHA, { appliedRevision: `main@sha1:${SHA}` }),
      ev('release.render', SHA2, { renderHash: 'sha256:1', objects: 1, effect: 'unchanged', sameAs: SHA }),
      ev('release.render', SHA3, { renderHash: 'sha256:1', objects: 1, effect: 'unchanged', sameAs: SHA }),
    ]);
    expect(releases.map((r) => [r.sha, r.unchangedFrom])).toEqual([
      [SHA3, SHA],
      [SHA2, SHA],
      [SHA, undefined],
    ]);
    const [newest, between, running] = releases;
    expect(running?.states[6]).toMatchObject({ name: 'health', status: 'pending' });
    expect(between?.states[6]).toMatchObject({ status: 'unknown', why: expect.stringMatching(/superseded/) });
    expect(newest?.states[3]?.value).toBe(`1 · 1 object · no change here (as ${SHA.slice(0, 7)})`);
    // one commit that changed something after them: the older one is superseded again
    const changed = buildReleases([
      ev('release.render', SHA, { renderHash: 'sha256:1' }),
      ev('release.render', SHA2, { renderHash: 'sha256:2', effect: 'changed' }),
    ]);
    expect(changed[1]?.states[6]?.status).toBe('unknown');
  });
});

describe('a release’s canary steps (issue 25)', () => {
  it('release.canary records attach to their release, oldest first, and are not states', () => {
    const sha = 'd'.repeat(40);
    const rel = (seq: number, type: string, data: Record<string, unknown>) => ({
      seq,
      time: `2026-12-02T10:00:0${seq}.000Z`,
      type,
      actor: 'x',
      data: { sha, ...data },
    });
    const [r] = buildReleases([
      rel(1, 'release.change', { subject: 'checkout 0.9.2' }),
      rel(3, 'release.canary', {
        rollout: 'Rollout staging/checkout',
        state: 'progressing',
        step: 2,
        steps: 5,
        weight: 20,
        phase: 'Paused',
        reason: 'at 20 %',
      }),
      rel(2, 'release.canary', {
        rollout: 'Rollout staging/checkout',
        state: 'progressing',
        step: 1,
        steps: 5,
        weight: 20,
        phase: 'Progressing',
        reason: 'started',
      }),
    ]);
    expect(r?.canary?.map((c) => [c.seq, c.step, c.phase])).toEqual([
      [2, 1, 'Progressing'],
      [3, 2, 'Paused'],
    ]);
    expect(r?.states.find((s) => s.name === 'verification')?.status).toBe('pending');
  });
});
