// "Merged, but not live — why?" on the timeline of release.ts, refined with the app's live conditions.
import { describe, expect, it } from 'vitest';
import { whyNotLive } from './release-not-live.ts';
import { buildReleases, type ReleaseEvent } from './release.ts';

const SHA = 'a'.repeat(40);
const SHA2 = 'b'.repeat(40);
const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

describe('merged, but not live', () => {
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
});
