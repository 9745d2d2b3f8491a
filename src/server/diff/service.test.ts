// DiffService's caching and coalescing over a fake apiserver (the real one: test/integration/diff-cache.test.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import { configMap, desiredDeployment, FakeApiserver, liveDeployment } from '../../../test/support/fake-apiserver.ts';
import type { Principal } from '../auth/sessions.ts';
import type { AppDeps } from '../deps.ts';
import type { RenderInput } from './desired.ts';
import { DiffService } from './service.ts';
import type { Obj, RenderResult } from './render.ts';

const app: App = {
  id: 'c/flux-system/kustomization/app',
  cluster: 'c',
  controller: 'flux',
  kind: 'Kustomization',
  namespace: 'flux-system',
  name: 'app',
  env: 'dev',
  source: { kind: 'GitRepository', name: 'repo' },
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
  sync: 'Synced',
  health: 'Healthy',
  healthMessage: '',
  conditions: [],
  inventory: [],
  warnings: [],
};

function setup(opts: { reviewer?: boolean; status?: string } = {}) {
  const api = new FakeApiserver();
  api.live.set('web', liveDeployment({ replicas: 2, ready: 2, rv: '10' }));
  api.live.set('settings', configMap('settings', 'on', '3'));
  const gitRepo = {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'GitRepository',
    metadata: { name: 'repo', namespace: 'flux-system' },
    status: { artifact: { url: 'http://source/a.tar.gz', digest: 'sha256:1', revision: 'main@sha1:1' } },
  };
  const state = { source: gitRepo as Obj, renderDelayMs: 0 };
  const ks = {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'app', namespace: 'flux-system' },
    spec: { path: './' },
  };
  let renders = 0;
  const render = async (input: RenderInput): Promise<RenderResult> => {
    renders++;
    if (state.renderDelayMs) await new Promise((r) => setTimeout(r, state.renderDelayMs));
    const rev = input.controller === 'flux' ? String(((input.source?.status as Obj).artifact as Obj).revision) : '';
    return {
      objects: [desiredDeployment(2), configMap('settings', 'on')],
      renderer: 'fake',
      revision: rev,
      renderHash: `sha256:${rev}`,
    };
  };
  const observed: unknown[] = [];
  const cluster: { name: string; conn: unknown; get: () => Obj; state?: { status: string } } = {
    name: 'c',
    conn: api.asConnection(),
    get: () => state.source,
    ...(opts.status ? { state: { status: opts.status } } : {}),
  };
  const deps = {
    dataDir: mkdtempSync(join(tmpdir(), 'diff-service-')),
    clusters: { clusters: new Map([['c', cluster]]) },
    catalog: { rawObject: () => ks },
    index: {
      trackedBy: () => [],
      watches: () => true,
      get: (_c: string, r: { name: string }) => api.live.get(r.name),
    },
    recorder: { observe: (e: unknown) => observed.push(e) },
    ...(opts.reviewer ? { reviewer: { allowed: async () => true } } : {}),
  } as unknown as Pick<AppDeps, 'clusters' | 'catalog' | 'index' | 'reviewer' | 'recorder' | 'dataDir'>; // the parts DiffService calls
  const svc = new DiffService(deps, { renderCache: { render } });
  return { api, svc, state, observed, renders: () => renders, cluster };
}

const user = (name: string): Principal => ({ name, source: 'local', groups: ['dev'], grants: [] });

describe('DiffService: live updates without a storm', () => {
  it('a second diff renders nothing and sends no dry-run; the response says so', async () => {
    const { svc, api } = setup();
    const a = await svc.diff(app, undefined);
    expect(a.work).toEqual({ renders: 1, dryRuns: 2, cachedObjects: 0, coalesced: false });
    const b = await svc.diff(app, undefined);
    expect(b.work).toEqual({ renders: 0, dryRuns: 0, cachedObjects: 2, coalesced: false });
    expect(api.dryRuns).toBe(2);
    expect(b.objects).toEqual(a.objects);
    expect(svc.stats()).toMatchObject({ diffs: 2, renders: 1, dryRuns: 2, cachedObjects: 2 });
  });

  it('a Deployment status write: zero; kubectl scale: one dry-run; a new revision: one render', async () => {
    const { svc, api, state } = setup();
    await svc.diff(app, undefined);
    api.live.set('web', liveDeployment({ replicas: 2, ready: 0, rv: '11', statusTime: 'later' }));
    expect((await svc.diff(app, undefined)).work).toMatchObject({ renders: 0, dryRuns: 0 });
    api.live.set('web', liveDeployment({ replicas: 4, ready: 0, rv: '12', scaledBy: 'kubectl' }));
    const scaled = await svc.diff(app, undefined);
    expect(scaled.work).toMatchObject({ renders: 0, dryRuns: 1, cachedObjects: 1 });
    expect(scaled.objects.find((o) => o.ref.name === 'web')?.status).toBe('changed');
    state.source = {
      ...state.source,
      status: { artifact: { url: 'http://source/b.tar.gz', digest: 'sha256:2', revision: 'main@sha1:2' } },
    };
    const next = await svc.diff(app, undefined);
    // same rendered objects, so the objects keep their results: the render is what the new revision costs
    expect(next.work).toMatchObject({ renders: 1, dryRuns: 0 });
    expect(next.render?.revision).toBe('main@sha1:2');
  });

  it('records a render as evidence once per render hash, cached or not', async () => {
    const { svc, observed } = setup();
    await svc.diff(app, undefined);
    await svc.diff(app, undefined);
    expect(observed).toHaveLength(1);
  });

  it('concurrent identical requests share one computation', async () => {
    const { svc, state, renders } = setup();
    state.renderDelayMs = 30;
    const [a, b, c] = await Promise.all([svc.diff(app, undefined), svc.diff(app, undefined), svc.diff(app, undefined)]);
    expect(renders()).toBe(1);
    expect([a.work.coalesced, b.work.coalesced, c.work.coalesced]).toEqual([false, true, true]);
    expect(svc.stats()).toMatchObject({ diffs: 1, coalesced: 2, dryRuns: 2 });
  });

  it('impersonation: each user has its own object results (the dry-run goes out as them), the render is shared', async () => {
    const { svc, api } = setup({ reviewer: true });
    await svc.diff(app, user('alice'));
    const bob = await svc.diff(app, user('bob'));
    expect(bob.work).toMatchObject({ renders: 0, dryRuns: 2 });
    expect((await svc.diff(app, user('alice'))).work).toMatchObject({ renders: 0, dryRuns: 0 });
    expect(api.dryRuns).toBe(4);
  });

  it('the environment comparison uses the same render cache', async () => {
    const { svc, renders } = setup();
    await svc.diff(app, undefined);
    const cmp = await svc.environments([app], undefined);
    expect(cmp.envs[0]?.renderHash).toBe('sha256:main@sha1:1');
    expect(renders()).toBe(1);
  });
});

describe('DiffService: the apply-noop proof (domain/apply-noop.ts) only from a current cache', () => {
  // settings as kustomize-controller applied it: the proof holds (Git's value, the Flux labels, nobody else)
  const provedSettings = (): Obj => ({
    ...configMap('settings', 'on', '3'),
    metadata: {
      name: 'settings',
      namespace: 'dev',
      resourceVersion: '3',
      labels: { 'kustomize.toolkit.fluxcd.io/name': 'app', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
      managedFields: [
        {
          manager: 'kustomize-controller',
          operation: 'Apply',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:labels': { 'f:kustomize.toolkit.fluxcd.io/name': {}, 'f:kustomize.toolkit.fluxcd.io/namespace': {} },
            },
            'f:data': { 'f:value': {} },
          },
        },
      ],
    },
  });

  it('cluster connected: the proved object is not dry-run', async () => {
    const { svc, api } = setup({ status: 'connected' });
    api.live.set('settings', provedSettings());
    const d = await svc.diff(app, undefined);
    expect(d.objects.find((o) => o.ref.name === 'settings')).toMatchObject({ mode: 'apply-noop', status: 'unchanged' });
    expect(d.work.dryRuns).toBe(1); // web only
  });

  it('cluster unreachable (the cache may be stale): every object is dry-run, as before', async () => {
    const { svc, api } = setup({ status: 'unreachable' });
    api.live.set('settings', provedSettings());
    const d = await svc.diff(app, undefined);
    expect(d.objects.find((o) => o.ref.name === 'settings')?.mode).toBe('server-dry-run');
    expect(d.work.dryRuns).toBe(2);
  });

  it('CONSOLE_DIFF_PROOF=off (applyNoop false): dry-run even when connected', async () => {
    const { api, cluster } = setup({ status: 'connected' });
    api.live.set('settings', provedSettings());
    const off = new DiffService(
      {
        dataDir: mkdtempSync(join(tmpdir(), 'diff-service-')),
        clusters: { clusters: new Map([['c', cluster]]) },
        catalog: {
          rawObject: () => ({
            apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
            kind: 'Kustomization',
            metadata: { name: 'app', namespace: 'flux-system' },
            spec: { path: './' },
          }),
        },
        index: {
          trackedBy: () => [],
          watches: () => true,
          get: (_c: string, r: { name: string }) => api.live.get(r.name),
        },
        recorder: { observe: () => undefined },
        diffApplyNoop: false,
      } as unknown as ConstructorParameters<typeof DiffService>[0],
      {
        renderCache: {
          render: async () => ({
            objects: [desiredDeployment(2), configMap('settings', 'on')],
            renderer: 'fake',
            revision: 'main@sha1:1',
            renderHash: 'sha256:x',
          }),
        },
      },
    );
    const d = await off.diff(app, undefined);
    expect(d.objects.find((o) => o.ref.name === 'settings')?.mode).toBe('server-dry-run');
  });
});
