import { describe, expect, it } from 'vitest';
import {
  buildReleases,
  checkLiveDigests,
  excerpt,
  imagesOf,
  isMutableImage,
  judgeVerification,
  parseGitShow,
  promoted,
  redactUrl,
  releaseDigests,
  reviewFromCommit,
  shaOf,
  verificationFor,
  whyNotLive,
  type ReleaseEvent,
} from './release.ts';

const SHA = 'a'.repeat(40);
const SHA2 = 'b'.repeat(40);
const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

describe('revisions and URLs', () => {
  it('reads the commit sha of Flux and Argo CD revisions', () => {
    expect(shaOf(`main@sha1:${SHA}`)).toBe(SHA);
    expect(shaOf(`sha1:${SHA}`)).toBe(SHA);
    expect(shaOf(SHA)).toBe(SHA);
    expect(shaOf('HEAD')).toBeUndefined();
    expect(shaOf('main@sha1:abc')).toBeUndefined();
    expect(shaOf(undefined)).toBeUndefined();
  });
  it('drops credentials from URLs', () => {
    expect(redactUrl('https://user:tok@git.example.com/r.git')).toBe('https://git.example.com/r.git');
    expect(redactUrl('http://127.0.0.1:1/r.git')).toBe('http://127.0.0.1:1/r.git');
  });
});

describe('images', () => {
  const deploy = (image: string, init?: string) => ({
    kind: 'Deployment',
    metadata: { name: 'w' },
    spec: {
      template: {
        spec: {
          containers: [{ name: 'c', image }],
          ...(init ? { initContainers: [{ name: 'i', image: init }] } : {}),
        },
      },
    },
  });
  it('lists every container image of workloads, flags mutable tags', () => {
    const imgs = imagesOf([
      deploy('reg.example.com/a/w:1.4.2', 'reg.example.com/a/init:latest'),
      { kind: 'ConfigMap', metadata: { name: 'x' }, data: { image: 'nope' } },
      {
        kind: 'CronJob',
        metadata: { name: 'cj' },
        spec: {
          jobTemplate: { spec: { template: { spec: { containers: [{ name: 'j', image: `reg:5000/j@${D1}` }] } } } },
        },
      },
    ]);
    expect(imgs.map((i) => [i.object, i.container, i.name, i.tag, i.digest, i.mutable])).toEqual([
      ['Deployment/w', 'i', 'reg.example.com/a/init', 'latest', undefined, true],
      ['Deployment/w', 'c', 'reg.example.com/a/w', '1.4.2', undefined, true],
      ['CronJob/cj', 'j', 'reg:5000/j', undefined, D1, false],
    ]);
  });
  it('a digest pins; :latest with a digest is still flagged', () => {
    expect(isMutableImage(`r.io/a@${D1}`)).toBe(false);
    expect(isMutableImage(`r.io/a:1.0@${D1}`)).toBe(false);
    expect(isMutableImage(`r.io/a:latest@${D1}`)).toBe(true);
    expect(isMutableImage('r.io/a')).toBe(true);
  });
  it('flags pods running a digest Git did not name, checks tags by their resolved digest', () => {
    const git = [
      { name: 'r.io/pinned', digest: D1 },
      { name: 'r.io/tagged', resolved: D2 },
      { name: 'r.io/unresolved' },
    ];
    const pods = [
      { pod: 'p1', container: 'a', image: `r.io/pinned@${D1}`, imageID: `r.io/pinned@${D1}` },
      { pod: 'p2', container: 'a', image: 'r.io/pinned:1', imageID: `docker-pullable://r.io/pinned@${D2}` },
      { pod: 'p3', container: 'b', image: 'r.io/tagged:2', imageID: `r.io/tagged@${D2}` },
      { pod: 'p4', container: 'c', image: 'r.io/unresolved:3', imageID: `r.io/unresolved@${D1}` },
      { pod: 'p5', container: 'd', image: 'r.io/sidecar:1', imageID: `r.io/sidecar@${D1}` },
      { pod: 'p6', container: 'e', image: 'r.io/tagged:2', imageID: '' },
    ];
    const r = checkLiveDigests(git, pods);
    expect(r.pods).toBe(6);
    expect(r.unresolved).toBe(1);
    expect(r.unexpected.map((u) => u.pod)).toEqual(['p2', 'p5']);
    expect(r.digests[D1]).toBe(3);
  });
});

describe('git show', () => {
  it('parses the commit fields and the signature status', () => {
    const out = [
      SHA,
      'Ann',
      'ann@x',
      '2026-01-01T10:00:00+00:00',
      'Cid',
      'cid@x',
      '2026-01-01T10:01:00+00:00',
      'N',
      '',
      'p1 p2',
      'Subject line\n\nBody\n',
    ].join('\0');
    const c = parseGitShow(out);
    expect(c).toMatchObject({
      sha: SHA,
      author: { name: 'Ann', email: 'ann@x' },
      committer: { name: 'Cid', time: '2026-01-01T10:01:00+00:00' },
      signature: { status: 'none', code: 'N' },
      parents: ['p1', 'p2'],
      subject: 'Subject line',
      message: 'Subject line\n\nBody',
    });
    expect(parseGitShow(out.replace('\0N\0', '\0G\0')).signature.status).toBe('verified');
    expect(parseGitShow(out.replace('\0N\0', '\0E\0')).signature.status).toBe('unverified');
    expect(() => parseGitShow('garbage')).toThrow(/unreadable/);
  });
});

describe('verification', () => {
  const cfg = {
    'nonprod/dev': { url: 'http://127.0.0.1:1/', expectStatus: 200 },
    'nonprod/flux-system/kustomization/special': { url: 'http://x/', bodyMatch: 'ok', timeoutMs: 10 },
  };
  it('is configured per app id first, else per cluster/env', () => {
    expect(
      verificationFor(cfg, { id: 'nonprod/flux-system/kustomization/special', cluster: 'nonprod', env: 'dev' }),
    ).toEqual({
      url: 'http://x/',
      expectStatus: 200,
      bodyMatch: 'ok',
      timeoutMs: 100,
    });
    expect(verificationFor(cfg, { id: 'other', cluster: 'nonprod', env: 'dev' })?.url).toBe('http://127.0.0.1:1/');
    expect(verificationFor(cfg, { id: 'other', cluster: 'prod', env: 'prod' })).toBeUndefined();
  });
  it('no answer is a failure; status, body and version header are checked', () => {
    const spec = {
      url: 'u',
      expectStatus: 200,
      bodyMatch: '"status":"ok"',
      versionHeader: 'X-Image-Digest',
      timeoutMs: 1000,
    };
    expect(judgeVerification(spec, { error: 'ECONNREFUSED' })).toEqual({
      ok: false,
      reason: 'no answer: ECONNREFUSED',
    });
    expect(judgeVerification(spec, { status: 503 }).ok).toBe(false);
    expect(judgeVerification(spec, { status: 200, body: '{"status":"down"}' }).reason).toMatch(/body does not match/);
    expect(judgeVerification(spec, { status: 200, body: '{"status":"ok"}', headers: {} }).reason).toMatch(
      /X-Image-Digest/,
    );
    expect(
      judgeVerification(spec, { status: 200, body: '{"status":"ok"}', headers: { 'x-image-digest': D1 } }).ok,
    ).toBe(true);
  });
  it('keeps body excerpts short and printable', () => {
    expect(excerpt('a\u0000b'.padEnd(500, 'x'))).toHaveLength(201);
    expect(excerpt('a\u0000b')).toBe('ab');
  });
});

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

describe('review without a forge, promotion by digest', () => {
  it.each([
    [{ parents: ['a', 'b'], message: 'Merge pull request #3' }, true, 'ok', false, []],
    [
      { parents: ['a'], message: 'fix\n\nReviewed-by: Rita Reviewer <rita@example.com>' },
      true,
      'ok',
      false,
      ['Rita Reviewer'],
    ],
    [{ parents: ['a'], message: 'hotfix' }, false, 'ok', true, []],
    [{ parents: ['a'], message: 'hotfix' }, true, 'failed', true, []],
    [{ parents: ['a'], message: 'x\nApproved-by: sam\nreviewed-by: sam' }, true, 'ok', false, ['sam']],
  ] as const)('%j required=%s → %s', (c, required, status, directPush, approvers) => {
    const r = reviewFromCommit({ parents: [...c.parents], message: c.message }, required);
    expect(r.status).toBe(status);
    expect(r.directPush).toBe(directPush);
    expect(r.approvers).toEqual(approvers);
    if (status === 'failed') expect(r.reason).toMatch(/direct push/);
  });
  it.each([
    [[], ['r/a@sha256:1'], undefined],
    [['r/a@sha256:1'], ['r/a@sha256:1', 'r/b@sha256:2'], true],
    [['r/a@sha256:1', 'r/b@sha256:2'], ['r/a@sha256:1'], false],
    [['r/a@sha256:1'], ['r/a@sha256:9'], false],
  ])('promoted(%j, %j) = %s', (from, to, want) => {
    expect(promoted(from, to)).toBe(want);
  });
  it('digests of a release: pinned or resolved, deduplicated, sorted; a tag never resolved is left out', () => {
    expect(
      releaseDigests([
        { name: 'r/b', digest: 'sha256:2' },
        { name: 'r/a', resolved: 'sha256:1' },
        { name: 'r/a', resolved: 'sha256:1' },
        { name: 'r/c' },
      ]),
    ).toEqual(['r/a@sha256:1', 'r/b@sha256:2']);
  });
});
