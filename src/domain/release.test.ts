// The timeline: release evidence grouped per revision, newest first, its states' values, why and blocked state.
import { describe, expect, it } from 'vitest';
import { buildReleases, type ReleaseEvent } from './release.ts';

const SHA = 'a'.repeat(40);
const SHA2 = 'b'.repeat(40);
const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

describe('the timeline', () => {
  let seq = 0;
  const ev = (type: string, sha: string, data: Record<string, unknown> = {}): ReleaseEvent => ({
    seq: ++seq,
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    type,
    actor: 'console',
    data: { sha, revision: `main@sha1:${sha}`, ...data },
  });
  const events = [
    ev('release.change', SHA, { author: { name: 'Ann' }, subject: 'first' }),
    ev('release.artifact', SHA, { artifactDigest: D1, images: [{ mutable: true }] }),
    ev('release.render', SHA, { renderHash: 'f'.repeat(64), objects: 9 }),
    ev('release.review', SHA, { pullRequest: { number: 7, mergedBy: 'rita' }, approvers: ['rita', 'sam'] }),
    ev('release.validation', SHA, { accepted: 9, rejected: 0 }),
    ev('release.reconcile', SHA, { appliedRevision: `main@sha1:${SHA}`, secondsAfterCommit: 12.3 }),
    ev('release.change', SHA2, { author: { name: 'Bob' }, subject: 'break it' }),
    ev('release.artifact', SHA2, { artifactDigest: D2 }),
    ev('release.render', SHA2, { status: 'failed', reason: 'render failed: missing.yaml: no such file' }),
    ev('release.reconcile', SHA2, { status: 'failed', reason: 'BuildFailed: kustomize build failed: missing.yaml' }),
    ev('app.revision-observed', SHA2),
  ];
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
});
