import { describe, expect, it } from 'vitest';
import {
  automationOfCommit,
  awaitingPushReport,
  imageAutomationOf,
  normPath,
  pathsOverlap,
  policyRule,
  repoKey,
  selects,
  type ImageObjects,
} from './image-automation.ts';
import { buildReleases } from './release.ts';

const REPO = 'http://127.0.0.1:3000/platform/digital-human.git';
const PUSHED = 'a'.repeat(40);
const OTHER = 'b'.repeat(40);
const AUTHOR = { name: 'Flux image automation', email: 'image-automation@flux.sandbox.invalid' };

const gitRepo = {
  metadata: { namespace: 'flux-system', name: 'digital-human' },
  spec: { url: REPO, ref: { branch: 'main' } },
};
const automation = (over: Record<string, unknown> = {}, status: Record<string, unknown> = {}) => ({
  metadata: { namespace: 'flux-system', name: 'digital-human-dev' },
  spec: {
    sourceRef: { kind: 'GitRepository', name: 'digital-human' },
    git: { checkout: { ref: { branch: 'main' } }, push: { branch: 'main' }, commit: { author: AUTHOR } },
    update: { path: './overlays/dev', strategy: 'Setters' },
    ...over,
  },
  status: {
    conditions: [{ type: 'Ready', status: 'True', reason: 'Succeeded', message: 'repository up-to-date' }],
    lastPushCommit: PUSHED,
    lastPushTime: '2026-12-03T07:00:05Z',
    observedPolicies: { 'tts-gateway': { name: '127.0.0.1:5000/digital-human/tts-gateway', tag: '2.1.1' } },
    ...status,
  },
});
const policy = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { namespace: 'flux-system', name, labels },
  spec: { imageRepositoryRef: { name }, policy: { semver: { range: '^2.1' } } },
  status: {
    conditions: [{ type: 'Ready', status: 'True', reason: 'Succeeded' }],
    latestRef: { name: `127.0.0.1:5000/digital-human/${name}`, tag: '2.1.1', digest: 'sha256:' + 'c'.repeat(64) },
    observedPreviousRef: { name: `127.0.0.1:5000/digital-human/${name}`, tag: '2.1.0' },
  },
});
const repository = (name: string) => ({
  metadata: { namespace: 'flux-system', name },
  spec: { image: `127.0.0.1:5000/digital-human/${name}` },
  status: {
    conditions: [{ type: 'Ready', status: 'True' }],
    lastScanResult: {
      tagCount: 4,
      latestTags: ['2.1.1', '2.1.0-build.2', '2.1.0', '2.0.0'],
      scanTime: '2026-12-03T07:00:00Z',
    },
  },
});
const objects = (over: Partial<ImageObjects> = {}): ImageObjects => ({
  automations: [automation()],
  policies: [policy('tts-gateway'), policy('render-worker')],
  repositories: [repository('tts-gateway'), repository('render-worker'), repository('unrelated')],
  gitRepository: (ns, name) => (ns === 'flux-system' && name === 'digital-human' ? gitRepo : undefined),
  ...over,
});
const dev = { sourceUrl: REPO, path: './overlays/dev' };

describe('which automation writes an app’s images', () => {
  it('paths compare segment-wise, `./` is the whole repository', () => {
    expect(normPath('./overlays/dev/')).toBe('overlays/dev');
    expect(normPath('./')).toBe('');
    expect(pathsOverlap('./overlays/dev', 'overlays/dev')).toBe(true);
    expect(pathsOverlap('./overlays', './overlays/dev')).toBe(true);
    expect(pathsOverlap('./', './overlays/staging')).toBe(true);
    expect(pathsOverlap('./overlays/dev', './overlays/staging')).toBe(false);
    expect(pathsOverlap('./apps/a', './apps/ab')).toBe(false);
  });
  it('a repository is the same without credentials, `.git`, a trailing slash or the host’s case', () => {
    expect(repoKey('http://bot:tok@127.0.0.1:3000/Platform/digital-human.git')).toBe(
      repoKey('http://127.0.0.1:3000/Platform/digital-human/'),
    );
    expect(repoKey('http://127.0.0.1:3000/platform/other.git')).not.toBe(repoKey(REPO));
  });
  it('label selectors: matchLabels and matchExpressions; none selects all', () => {
    expect(selects(undefined, { a: '1' })).toBe(true);
    expect(selects({ matchLabels: { a: '1' } }, { a: '1', b: '2' })).toBe(true);
    expect(selects({ matchLabels: { a: '1' } }, { a: '2' })).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '3'] }] }, { a: '3' })).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, { a: '1' })).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }, {})).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, {})).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }, { a: '1' })).toBe(false);
  });
  it('policy rules read as people write them', () => {
    expect(policyRule({ semver: { range: '^2.1' } })).toBe('semver ^2.1');
    expect(policyRule({ alphabetical: { order: 'desc' } })).toBe('alphabetical desc');
    expect(policyRule({ numerical: {} })).toBe('numerical asc');
    expect(policyRule(undefined)).toBe('no rule');
  });
  it('dev’s automation, the policies it applies and the repositories they choose from; staging has none', () => {
    const v = imageAutomationOf(dev, objects());
    expect(v.automations.map((a) => `${a.namespace}/${a.name}`)).toEqual(['flux-system/digital-human-dev']);
    expect(v.automations[0]).toMatchObject({
      source: { url: REPO },
      pushBranch: 'main',
      checkoutBranch: 'main',
      updatePath: 'overlays/dev',
      lastPushCommit: PUSHED,
      policies: ['render-worker', 'tts-gateway'],
    });
    expect(v.policies.map((p) => [p.name, p.rule, p.chosen?.tag, p.previous?.tag])).toEqual([
      ['render-worker', 'semver ^2.1', '2.1.1', '2.1.0'],
      ['tts-gateway', 'semver ^2.1', '2.1.1', '2.1.0'],
    ]);
    expect(v.repositories.map((r) => [r.name, r.tagCount, r.latestTags[0]])).toEqual([
      ['render-worker', 4, '2.1.1'],
      ['tts-gateway', 4, '2.1.1'],
    ]);
    expect(imageAutomationOf({ sourceUrl: REPO, path: './overlays/staging' }, objects()).automations).toEqual([]);
    expect(
      imageAutomationOf({ sourceUrl: 'http://127.0.0.1:3000/platform/other.git', path: './' }, objects()).automations,
    ).toEqual([]);
  });
  it('a policySelector narrows the policies', () => {
    const v = imageAutomationOf(
      dev,
      objects({
        automations: [automation({ policySelector: { matchLabels: { app: 'tts' } } })],
        policies: [policy('tts-gateway', { app: 'tts' }), policy('render-worker')],
      }),
    );
    expect(v.automations[0]?.policies).toEqual(['tts-gateway']);
    expect(v.policies.map((p) => p.name)).toEqual(['tts-gateway']);
  });
  it('an automation whose GitRepository is gone matches no app (its URL is unknown)', () => {
    expect(imageAutomationOf(dev, objects({ gitRepository: () => undefined })).automations).toEqual([]);
  });
});

describe('who made a commit', () => {
  const view = imageAutomationOf(dev, objects());
  it('confirmed: the controller reported pushing this very commit; the line names policy, choice, digest, registry', () => {
    const a = automationOfCommit({ sha: PUSHED, author: AUTHOR }, view);
    expect(a).toMatchObject({ confirmed: true, automation: 'flux-system/digital-human-dev', pushBranch: 'main' });
    expect(a?.line).toBe(
      `image automation flux-system/digital-human-dev: policy tts-gateway (semver ^2.1) chose 2.1.1 (was 2.1.0), digest sha256:${'c'.repeat(64)}, from 127.0.0.1:5000/digital-human/tts-gateway`,
    );
  });
  it('confirmed even when a person’s name is on it: the controller’s report decides, not the author line', () => {
    expect(
      automationOfCommit({ sha: PUSHED, author: { name: 'Eve', email: 'eve@example.com' } }, view)?.confirmed,
    ).toBe(true);
  });
  it('claimed: the automation’s author line on a commit it never reported pushing', () => {
    const a = automationOfCommit({ sha: OTHER, author: { ...AUTHOR, email: AUTHOR.email.toUpperCase() } }, view);
    expect(a).toMatchObject({ confirmed: false, automation: 'flux-system/digital-human-dev' });
    expect(a?.line).toMatch(
      /claims image automation .* which has not reported pushing bbbbbbbb \(its last push: aaaaaaaa\)/,
    );
  });
  it('anyone else’s commit is nobody’s automation (the same display name with another email is not the bot)', () => {
    expect(automationOfCommit({ sha: OTHER, author: { name: 'Ann', email: 'ann@example.com' } }, view)).toBeUndefined();
    expect(
      automationOfCommit({ sha: OTHER, author: { name: AUTHOR.name, email: 'x@example.com' } }, view),
    ).toBeUndefined();
  });
  it('an automation-authored commit waits for the push report only while it may still come', () => {
    const made = '2026-12-03T07:10:00Z';
    const t = Date.parse(made);
    const c = { author: AUTHOR, committerTime: made };
    expect(awaitingPushReport(c, view, t + 5_000, 60_000)).toBe(true); // last push 07:00:05 is older
    expect(awaitingPushReport(c, view, t + 61_000, 60_000)).toBe(false);
    expect(awaitingPushReport({ author: { name: 'Ann', email: 'a@x' }, committerTime: made }, view, t, 60_000)).toBe(
      false,
    );
    const later = imageAutomationOf(
      dev,
      objects({ automations: [automation({}, { lastPushTime: '2026-12-03T07:10:03Z' })] }),
    );
    expect(awaitingPushReport(c, later, t + 5_000, 60_000)).toBe(false); // it reported a push since: not this one
  });
  it('the timeline names the automation as the actor of a confirmed change, and shows a claim beside the subject', () => {
    const ev = (seq: number, sha: string, data: Record<string, unknown>) => ({
      seq,
      time: `2026-12-03T07:00:0${seq}Z`,
      type: 'release.change',
      actor: 'console',
      data: { sha, revision: `main@sha1:${sha}`, author: AUTHOR, subject: 'Update images', ...data },
    });
    const [newer, older] = buildReleases([
      ev(1, PUSHED, { automation: automationOfCommit({ sha: PUSHED, author: AUTHOR }, view) }),
      ev(2, OTHER, { automation: automationOfCommit({ sha: OTHER, author: AUTHOR }, view) }),
    ]);
    expect(older?.states[0]).toMatchObject({
      actor: 'image automation flux-system/digital-human-dev',
      value: expect.stringMatching(/^image automation .*chose 2\.1\.1/),
    });
    expect(newer?.states[0]).toMatchObject({
      actor: AUTHOR.name,
      value: expect.stringMatching(/^Update images · the author claims image automation/),
    });
  });
});
