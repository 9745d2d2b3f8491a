// The release recorder against a real SQLite store and a fake catalog: states recorded in order as the app
// moves, a render failure recorded as failed, an unreadable commit as unknown (the recorder goes on), and a
// restart that records nothing twice.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { App } from '../../domain/app.ts';
import { RELEASE_EVIDENCE_TYPES } from '../../domain/release.ts';
import type { AppCatalog } from '../apps/catalog.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { RenderError, type RenderResult } from '../diff/render.ts';
import { openEvidenceStore } from '../evidence/open-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';
import { ReleaseRecorder } from './recorder.ts';
import type { Forge, ForgeResult } from '../forge/forge.ts';
import type { ForgeDirectory } from '../forge/forge-directory.ts';

const SHA = 'c'.repeat(40);
const log = { info: () => {}, warn: () => {}, error: () => {} };

function baseApp(over: Partial<App> = {}): App {
  return {
    id: 'c1/flux-system/kustomization/web',
    cluster: 'c1',
    controller: 'flux',
    kind: 'Kustomization',
    namespace: 'flux-system',
    name: 'web',
    env: 'dev',
    // not an http(s) URL: the commit cannot be read, which must be recorded as unknown
    source: {
      kind: 'GitRepository',
      url: 'file:///nowhere.git',
      revisionWanted: `main@sha1:${SHA}`,
      artifactDigest: 'sha256:aa',
    },
    automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
    sync: 'OutOfSync',
    health: 'Progressing',
    healthMessage: '',
    conditions: [],
    inventory: [],
    warnings: [],
    generation: 3,
    ...over,
  };
}

class FakeCatalog extends EventEmitter {
  app: App = baseApp();
  others: App[] = [];
  get(id: string) {
    return id === this.app.id ? this.app : this.others.find((a) => a.id === id);
  }
  list() {
    return [this.app, ...this.others];
  }
  set(a: App) {
    this.app = a;
    this.emit('app', { type: 'upsert', app: a });
  }
}

const render: RenderResult = {
  objects: [
    {
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { containers: [{ name: 'web', image: 'r.io/web:1.0' }] } } },
    },
  ],
  renderer: 'flux-render test',
  revision: `main@sha1:${SHA}`,
  renderHash: 'sha256:abc',
};

let dir: string;
let store: EvidenceStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function setup(
  desired: () => Promise<RenderResult>,
  catalog = new FakeCatalog(),
  more: Partial<ReleaseRecorderOptions> = {},
) {
  const recorder = new EvidenceRecorder(store as EvidenceStore, log);
  const rr = new ReleaseRecorder({
    catalog: catalog as unknown as AppCatalog,
    recorder,
    store: store as EvidenceStore,
    index: { get: () => undefined, childrenOf: () => [] } as unknown as ObjectIndex,
    desired,
    dataDir: dir,
    log,
    ...more,
  });
  return { catalog, recorder, rr };
}

const types = async () =>
  (await (store as EvidenceStore).list({ type: RELEASE_EVIDENCE_TYPES, order: 'asc' })).map((e) => [
    e.type,
    e.data.status,
  ]);

describe('release recorder', () => {
  it('records change (unknown: unreadable), artifact, render, reconcile as the app moves; resumes without duplicates', async () => {
    dir = mkdtempSync(join(tmpdir(), 'release-rec-'));
    store = await openEvidenceStore({ dataDir: dir });
    const { catalog, recorder, rr } = await setup(async () => render);
    rr.start();
    await rr.idle();
    await recorder.flush();
    expect(await types()).toEqual([
      ['release.change', 'unknown'],
      ['release.review', 'unknown'],
      ['release.artifact', 'ok'],
      ['release.render', 'ok'],
      ['release.validation', 'unknown'],
    ]);
    const [review] = await store.list({ type: 'release.review' });
    expect(review?.data).toMatchObject({ source: 'commit', forge: 'no forge configured' });
    const [artifact] = await store.list({ type: 'release.artifact' });
    expect(artifact?.data).toMatchObject({
      sha: SHA,
      controller: 'flux',
      generation: 3,
      artifactDigest: 'sha256:aa',
      images: [{ image: 'r.io/web:1.0', mutable: true }],
    });
    const [change] = await store.list({ type: 'release.change' });
    expect(String(change?.data.reason)).toMatch(/cannot read the commit/);

    catalog.set(
      baseApp({
        source: { ...catalog.app.source, revisionObserved: `main@sha1:${SHA}` },
        conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
        sync: 'Synced',
      }),
    );
    await rr.idle();
    await recorder.flush();
    expect((await types()).at(-1)).toEqual(['release.reconcile', 'ok']);
    await rr.stop();

    // a restart: the same app, the same revision → nothing new
    const again = await setup(async () => render, catalog);
    again.rr.start();
    await again.rr.idle();
    await again.recorder.flush();
    await again.rr.stop();
    expect(await types()).toHaveLength(6);
  });

  it('a failing render is recorded as failed with the error; a source that cannot be fetched as unknown', async () => {
    dir = mkdtempSync(join(tmpdir(), 'release-rec-'));
    store = await openEvidenceStore({ dataDir: dir });
    const { recorder, rr } = await setup(async () => {
      throw new RenderError('accumulating resources: missing.yaml: no such file', 'render');
    });
    rr.start();
    await rr.idle();
    await recorder.flush();
    await rr.stop();
    const [r] = await store.list({ type: 'release.render' });
    expect(r?.data).toMatchObject({ status: 'failed', reason: expect.stringContaining('missing.yaml') });

    const c2 = new FakeCatalog();
    c2.app = baseApp({ id: 'c1/flux-system/kustomization/other', source: { ...c2.app.source } });
    const s2 = await setup(async () => {
      throw new RenderError('artifact download failed: 503', 'source');
    }, c2);
    s2.rr.start();
    await s2.rr.idle();
    await s2.recorder.flush();
    await s2.rr.stop();
    const [a] = await store.list({ app: c2.app.id, type: 'release.artifact' });
    expect(a?.data).toMatchObject({ status: 'unknown', reason: expect.stringContaining('source not fetched') });
  });

  it("a render that meets the console's full disk is tried again, not recorded as the release's failed render", async () => {
    dir = mkdtempSync(join(tmpdir(), 'release-rec-'));
    store = await openEvidenceStore({ dataDir: dir });
    let full = true;
    const { catalog, recorder, rr } = await setup(async () => {
      if (full) {
        full = false;
        throw Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG' });
      }
      return render;
    });
    rr.start();
    await rr.idle();
    await recorder.flush();
    expect(await store.list({ type: 'release.render' })).toEqual([]);
    catalog.set(catalog.app); // the next tick (the disk has room again)
    await rr.idle();
    await recorder.flush();
    await rr.stop();
    const renders = await store.list({ type: 'release.render' });
    expect(renders).toHaveLength(1);
    expect(renders[0]?.data.status).toBe('ok');
    expect(renders[0]?.data.renderHash).toBe(render.renderHash);
    const [artifact] = await store.list({ type: 'release.artifact' });
    expect(artifact?.data.imagesUnknown).toBeUndefined();
  });

  it('review from the forge: unreachable is unknown and asked again; then the PR, its approvers and merge time', async () => {
    dir = mkdtempSync(join(tmpdir(), 'release-rec-'));
    store = await openEvidenceStore({ dataDir: dir });
    let up = false;
    // the Gitea API as the review reader asks it: PR #12 by dev, approved by rita on its head, merged by rita
    const HEAD = 'e'.repeat(40);
    const gitea: Record<string, unknown> = {
      [`/repos/p/r/commits/${SHA}/pull`]: {
        number: 12,
        html_url: 'http://forge/p/r/pulls/12',
        title: 'bump web',
        user: { login: 'dev' },
        merged: true,
        merged_at: '2026-12-01T10:00:00Z',
        merged_by: { login: 'rita' },
        merge_commit_sha: SHA,
        base: { ref: 'main' },
        head: { ref: 'bump' },
      },
      '/repos/p/r/git/refs/pull/12/head': { ref: 'refs/pull/12/head', object: { sha: HEAD } },
      '/repos/p/r/pulls/12/reviews?page=1&limit=50': [
        { user: { login: 'rita' }, state: 'APPROVED', commit_id: HEAD, submitted_at: '2026-12-01T09:59:00Z' },
      ],
      '/repos/p/r/pulls/12/commits?verification=false&files=false&page=1&limit=50': [
        { sha: HEAD, author: { login: 'dev' }, committer: { login: 'dev' } },
      ],
    };
    const forge = {
      kind: 'gitea',
      getJson: async (path: string): Promise<ForgeResult<unknown>> =>
        !up
          ? { ok: false, state: 'forge-unreachable', message: 'forge unreachable: connect ECONNREFUSED' }
          : path in gitea
            ? { ok: true, value: gitea[path] }
            : path.includes('page=')
              ? { ok: true, value: [] }
              : { ok: false, state: 'not-found', message: 'not found on the forge' },
    } as unknown as Forge;
    const forges = {
      forRepoUrl: () => ({ ok: true, value: { forge, repo: { host: 'forge', owner: 'p', name: 'r' } } }),
    } as unknown as ForgeDirectory;
    const { catalog, recorder, rr } = await setup(async () => render, new FakeCatalog(), {
      forges,
      reviewRetryMs: 0,
      validate: async () => ({
        revision: render.revision,
        accepted: 0,
        rejected: [{ object: 'Deployment/web', reason: 'spec.replicas: Invalid value: -1' }],
        unchecked: [],
      }),
    });
    rr.start();
    await rr.idle();
    await recorder.flush();
    const first = await store.list({ type: 'release.review' });
    expect(first[0]?.data).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/forge unreachable/) });
    const [validation] = await store.list({ type: 'release.validation' });
    expect(validation?.data).toMatchObject({
      status: 'failed',
      rejected: 1,
      reason: expect.stringContaining('Deployment/web: spec.replicas: Invalid value'),
    });
    up = true;
    catalog.set(catalog.app); // the next tick asks the forge again
    await rr.idle();
    await recorder.flush();
    await rr.stop();
    const [review] = await store.list({ type: 'release.review' });
    expect(review?.actor).toBe('rita');
    expect(review?.data).toMatchObject({
      source: 'forge',
      pullRequest: { number: 12, author: 'dev', mergedBy: 'rita', headCommit: HEAD },
      approvers: ['rita'],
      reviewed: true,
      mergeTime: '2026-12-01T10:00:00Z',
    });
    expect(review?.data.status).toBe('ok');
  });

  it('a restart after the revision moved records a gap; a release applied in staging with the same digests is a promotion of the dev one', async () => {
    dir = mkdtempSync(join(tmpdir(), 'release-rec-'));
    store = await openEvidenceStore({ dataDir: dir });
    const pinned: RenderResult = {
      ...render,
      objects: [
        {
          kind: 'Deployment',
          metadata: { name: 'web' },
          spec: {
            template: { spec: { containers: [{ name: 'web', image: `r.io/web:1.0@sha256:${'1'.repeat(64)}` }] } },
          },
        },
      ],
    };
    const catalog = new FakeCatalog();
    // dev applied SHA (it went live there)
    catalog.app = baseApp({
      name: 'web-dev',
      id: 'c1/flux-system/kustomization/web-dev',
      source: { ...baseApp().source, revisionObserved: `main@sha1:${SHA}` },
      conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
    });
    const first = await setup(async () => pinned, catalog);
    first.rr.start();
    await first.rr.idle();
    await first.recorder.flush();
    await first.rr.stop();

    // the console was down while dev moved to SHA2, and staging applied SHA2 with the same digests
    const SHA2 = 'd'.repeat(40);
    catalog.app = baseApp({
      name: 'web-dev',
      id: 'c1/flux-system/kustomization/web-dev',
      source: { ...baseApp().source, revisionWanted: `main@sha1:${SHA2}` },
    });
    const staging = baseApp({
      name: 'web-staging',
      id: 'c1/flux-system/kustomization/web-staging',
      env: 'staging',
      source: {
        ...catalog.app.source,
        revisionWanted: `main@sha1:${SHA2}`,
        revisionObserved: `main@sha1:${SHA2}`,
      },
      conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
    });
    catalog.others = [staging];
    const again = await setup(async () => ({ ...pinned, revision: `main@sha1:${SHA2}` }), catalog);
    again.rr.start();
    await again.rr.idle();
    await again.recorder.flush();
    await again.rr.stop();
    const [gap] = await store.list({ type: 'release.gap' as never });
    expect(gap?.app).toBe(catalog.app.id);
    expect(gap?.data).toMatchObject({ lastRecordedSha: SHA, currentSha: SHA2 });
    const promotions = await store.list({ type: 'release.promotion' });
    // dev's SHA2 renders exactly as SHA, which runs there: no change in dev, and not what brought the digest
    const [devRender] = await store.list({ app: catalog.app.id, type: ['release.render'] });
    expect(devRender?.data).toMatchObject({ sha: SHA2, effect: 'unchanged', sameAs: SHA, unchangedFrom: SHA });
    // the release that brought the digest to dev (SHA, live there) is the one promoted
    expect(promotions).toHaveLength(1);
    expect(promotions[0]?.app).toBe(catalog.app.id);
    expect(promotions[0]?.data).toMatchObject({ toEnv: 'staging', toApp: staging.id, toSha: SHA2 });
    expect(promotions[0]?.data.sha).toBe(SHA);
  });

  it('promotion goes to the release that went live with the digests, never to an older one whose reconcile failed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'release-rec-'));
    store = await openEvidenceStore({ dataDir: dir });
    const image = `r.io/web:1.0@sha256:${'2'.repeat(64)}`;
    const rendering = (sha: string, hash: string): RenderResult => ({
      ...render,
      objects: [
        {
          kind: 'Deployment',
          metadata: { name: 'web' },
          spec: { template: { spec: { containers: [{ name: 'web', image }] } } },
        },
        { kind: 'ConfigMap', metadata: { name: `cm-${hash}` } },
      ],
      revision: `main@sha1:${sha}`,
      renderHash: hash,
    });
    const dev = { name: 'web-dev', id: 'c1/flux-system/kustomization/web-dev' };
    const [X, A, S] = ['e'.repeat(40), 'f'.repeat(40), '9'.repeat(40)];
    const catalog = new FakeCatalog();
    // X: the digest, but its reconcile fails
    catalog.app = baseApp({
      ...dev,
      source: { ...baseApp().source, revisionWanted: `main@sha1:${X}`, revisionAttempted: `main@sha1:${X}` },
      conditions: [{ type: 'Ready', status: 'False', reason: 'ReconciliationFailed', message: 'apply failed' }],
    });
    let current = rendering(X, 'sha256:x');
    const rec = await setup(async () => current, catalog);
    rec.rr.start();
    await rec.rr.idle();
    // A: the same digest, applied and Ready
    current = rendering(A, 'sha256:a');
    catalog.set(
      baseApp({
        ...dev,
        source: { ...baseApp().source, revisionWanted: `main@sha1:${A}`, revisionObserved: `main@sha1:${A}` },
        conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
      }),
    );
    await rec.rr.idle();
    // staging applies S, running the digest
    const staging = baseApp({
      name: 'web-staging',
      id: 'c1/flux-system/kustomization/web-staging',
      env: 'staging',
      source: { ...baseApp().source, revisionWanted: `main@sha1:${S}`, revisionObserved: `main@sha1:${S}` },
      conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
    });
    catalog.others = [staging];
    current = rendering(S, 'sha256:s');
    catalog.emit('app', { type: 'upsert', app: staging });
    await rec.rr.idle();
    await rec.recorder.flush();
    await rec.rr.stop();
    const reconciles = await store.list({ app: catalog.app.id, type: ['release.reconcile'], order: 'asc' });
    expect(reconciles.map((e) => [e.data.sha, e.data.status])).toEqual([
      [X, 'failed'],
      [A, 'ok'],
    ]);
    const promotions = await store.list({ type: 'release.promotion' });
    expect(promotions.map((e) => [e.data.sha, e.data.toSha])).toEqual([[A, S]]);
  });

  /**
   * P is applied (Progressing), then each of `later` — other teams' commits, the same render here — is applied while
   * P is not healthy yet; 5 s later the app is Healthy at the last of them. The records end up in `store`.
   */
  async function unrelatedCommitsAfter(P: string, later: string[]) {
    dir = mkdtempSync(join(tmpdir(), 'release-rec-'));
    const opened = await openEvidenceStore({ dataDir: dir });
    store = opened;
    const at = (sha: string, health: App['health']) =>
      baseApp({
        source: { ...baseApp().source, revisionWanted: `main@sha1:${sha}`, revisionObserved: `main@sha1:${sha}` },
        conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
        health,
      });
    const catalog = new FakeCatalog();
    catalog.app = at(P, 'Progressing');
    let revision = P;
    const rec = await setup(async () => ({ ...render, revision: `main@sha1:${revision}` }), catalog);
    rec.rr.start();
    await rec.rr.idle();
    for (const sha of later) {
      revision = sha;
      catalog.set(at(sha, 'Progressing'));
      await rec.rr.idle();
    }
    vi.setSystemTime(Date.now() + 5_000);
    catalog.set(at(revision, 'Healthy'));
    await rec.rr.idle();
    await rec.recorder.flush();
    await rec.rr.stop();
    return opened;
  }

  it('a release superseded by a commit that changes nothing here still gets its health: what runs is that release', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-12-06T10:00:00.000Z') });
    try {
      const [P, C] = ['1'.repeat(40), '2'.repeat(40)];
      // another team's commit C lands before P is healthy: the same render here
      const store = await unrelatedCommitsAfter(P, [C]);
      const [cRender] = await store.list({ type: ['release.render'], text: C });
      expect(cRender?.data).toMatchObject({ sha: C, effect: 'unchanged', sameAs: P });
      const health = await store.list({ type: ['release.health'], order: 'asc' });
      expect(health.map((e) => [e.data.sha, e.data.health])).toContainEqual([P, 'Healthy']);
      // C's own records say it changed nothing here
      expect(health.find((e) => e.data.sha === C)?.data.unchangedFrom).toBe(P);
    } finally {
      vi.useRealTimers();
    }
  });

  it('two unrelated commits in a row: both are "no change here" as the release that runs, which keeps its health', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-12-06T10:00:00.000Z') });
    try {
      const [P, C, D] = ['1'.repeat(40), '2'.repeat(40), '3'.repeat(40)];
      // two other teams' commits land before P is healthy: the same render here each time
      const store = await unrelatedCommitsAfter(P, [C, D]);
      const renders = await store.list({ type: ['release.render'], order: 'asc' });
      // D is the same as P (the release that runs), never as C (itself no change)
      expect(renders.find((e) => e.data.sha === D)?.data).toMatchObject({ effect: 'unchanged', sameAs: P });
      const health = await store.list({ type: ['release.health'], order: 'asc' });
      expect(health.map((e) => [e.data.sha, e.data.health])).toContainEqual([P, 'Healthy']);
    } finally {
      vi.useRealTimers();
    }
  });
});
