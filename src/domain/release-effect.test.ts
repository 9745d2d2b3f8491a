// Whether a commit changed what an app runs (release-effect.ts): the running release is the newest other revision
// rendered and reconciled ok; the same render hash with no tag resolved elsewhere is no change; anything unknown is
// a change.
import { describe, expect, it } from 'vitest';
import { releaseEffect, runningRelease, type EffectEvent } from './release-effect.ts';

let seq = 0;
const ev = (type: string, sha: string, data: Record<string, unknown> = {}): EffectEvent => ({
  seq: ++seq,
  type,
  data: { sha, status: 'ok', ...data },
});
const img = (name: string, d: { digest?: string; resolved?: string }) => ({ name, ...d });
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

describe('runningRelease', () => {
  it('is the newest other revision whose render and reconcile were recorded ok', () => {
    const events = [
      ev('release.artifact', A, { images: [img('r.io/web', { digest: 'sha256:1' })] }),
      ev('release.render', A, { renderHash: 'h1' }),
      ev('release.reconcile', A),
      // B rendered but its reconcile failed: not running
      ev('release.render', B, { renderHash: 'h2' }),
      ev('release.reconcile', B, { status: 'failed' }),
      // C is the release being classified
      ev('release.render', C, { renderHash: 'h3' }),
      ev('release.reconcile', C),
    ];
    expect(runningRelease(events, C)).toEqual({ sha: A, renderHash: 'h1', digests: ['r.io/web@sha256:1'] });
    // in any order (the store lists newest first)
    expect(runningRelease([...events].reverse(), C)?.sha).toBe(A);
  });

  it('a newer revision that changed nothing runs its release: that release is the running one (issue 39)', () => {
    const events = [
      ev('release.render', A, { renderHash: 'h1' }),
      ev('release.reconcile', A),
      // B: an unrelated commit, no change here (as A), reconciled
      ev('release.render', B, { renderHash: 'h1', effect: 'unchanged', sameAs: A }),
      ev('release.reconcile', B),
    ];
    expect(runningRelease(events, C)?.sha).toBe(A);
    expect(releaseEffect({ renderHash: 'h1', images: [] }, runningRelease(events, C))).toEqual({
      effect: 'unchanged',
      sameAs: A,
    });
  });

  it('none when no other revision is rendered ok and reconciled ok', () => {
    expect(runningRelease([], A)).toBeUndefined();
    expect(
      runningRelease([ev('release.render', B, { status: 'failed' }), ev('release.reconcile', B)], A),
    ).toBeUndefined();
    expect(runningRelease([ev('release.render', B, { renderHash: 'h' })], A)).toBeUndefined();
  });
});

describe('releaseEffect', () => {
  const running = { sha: A, renderHash: 'h1', digests: ['r.io/web@sha256:1'] };

  it('the same render as the running release: no change here, naming it', () => {
    expect(releaseEffect({ renderHash: 'h1', images: [img('r.io/web', { digest: 'sha256:1' })] }, running)).toEqual({
      effect: 'unchanged',
      sameAs: A,
    });
    // a tag the registry could not resolve (no digest known) changes nothing the render says
    expect(releaseEffect({ renderHash: 'h1', images: [img('r.io/web', {})] }, running).effect).toBe('unchanged');
  });

  it('another render, a tag now resolved to another digest, or no running release: a change', () => {
    expect(releaseEffect({ renderHash: 'h2', images: [] }, running)).toMatchObject({ effect: 'changed', since: A });
    expect(
      releaseEffect({ renderHash: 'h1', images: [img('r.io/web', { resolved: 'sha256:9' })] }, running),
    ).toMatchObject({ effect: 'changed', why: expect.stringMatching(/r\.io\/web resolves to another digest/) });
    expect(releaseEffect({ renderHash: 'h1', images: [] }, undefined)).toMatchObject({
      effect: 'changed',
      since: null,
    });
  });
});
