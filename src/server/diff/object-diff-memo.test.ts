import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../domain/evidence.ts';
import { Discovery } from '../kube/discovery.ts';
import { configMap, desiredDeployment, FakeApiserver, liveDeployment } from '../../../test/support/fake-apiserver.ts';
import { diffApp, type AppDiff, type DiffDeps, type ObjectDiff } from './app-diff.ts';
import { liveFingerprint, ObjectDiffCache, type MemoScope } from './object-diff-memo.ts';
import type { Obj, RenderResult } from './render.ts';
import type { App } from '../../domain/app.ts';

const scope: MemoScope = {
  cluster: 'c',
  appId: 'c/flux-system/kustomization/app',
  controller: 'flux',
  manager: 'kustomize-controller',
  identity: 'console',
  dryRun: 'PATCH apply dryRun=All force=true',
  ignore: null,
  jq: false,
};

describe('liveFingerprint: the live object as a diff can see it', () => {
  const base = liveFingerprint(liveDeployment({ replicas: 2, ready: 2, rv: '10' }));
  it.each<[string, Obj]>([
    [
      'a status write (Pods became ready): status, resourceVersion, the status entry time',
      liveDeployment({ replicas: 2, ready: 1, rv: '11', statusTime: '2026-01-01T00:09:00Z' }),
    ],
  ])('unchanged by %s', (_, o) => expect(liveFingerprint(o)).toBe(base));

  it.each<[string, Obj]>([
    [
      'kubectl scale (spec.replicas and its owner)',
      liveDeployment({ replicas: 3, ready: 2, rv: '12', scaledBy: 'kubectl' }),
    ],
    [
      'a label change',
      (() => {
        const o = liveDeployment({ replicas: 2, ready: 2, rv: '13' });
        (o.metadata as { labels: Record<string, string> }).labels.team = 'x';
        return o;
      })(),
    ],
  ])('changed by %s', (_, o) => expect(liveFingerprint(o)).not.toBe(base));

  it("keeps an entry's non-status fields in the key, not its time", () => {
    const o = liveDeployment({ replicas: 2, ready: 2, rv: '10' });
    const mf = (o.metadata as { managedFields: Array<{ fieldsV1: Obj; time: string }> }).managedFields;
    const entry = mf[1] as { fieldsV1: Obj; time: string }; // kube-controller-manager: revision annotation + status
    entry.fieldsV1 = { ...entry.fieldsV1, 'f:metadata': { 'f:annotations': { 'f:other': {} } } };
    expect(liveFingerprint(o)).not.toBe(base);
    const later = liveDeployment({ replicas: 2, ready: 2, rv: '10' });
    ((later.metadata as { managedFields: Array<{ time: string }> }).managedFields[0] as { time: string }).time = 'x';
    expect(liveFingerprint(later)).toBe(base);
  });
});

describe('ObjectDiffCache scopes', () => {
  const result: ObjectDiff = {
    ref: { cluster: 'c', group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'a' },
    status: 'unchanged',
    mode: 'server-dry-run',
    changes: [],
  };
  const d = configMap('a', '1');
  const l = configMap('a', '1', '5');

  it.each<[string, Partial<MemoScope>]>([
    ['another identity (impersonation)', { identity: '{"Impersonate-User":"alice"}' }],
    ['another field manager', { manager: 'argocd-controller' }],
    ['changed ignore rules', { ignore: [{ kind: 'Deployment', jsonPointers: ['/spec/replicas'] }] }],
    ['another app', { appId: 'c/flux-system/kustomization/other' }],
  ])('%s does not see the result', (_, over) => {
    const c = new ObjectDiffCache();
    c.scope(scope).remember(d, l, result);
    expect(c.scope(scope).recall(d, l)).toBe(result);
    expect(c.scope({ ...scope, ...over }).recall(d, l)).toBeUndefined();
  });

  it('another desired object or another live object is a miss; a missing live object has its own key', () => {
    const c = new ObjectDiffCache();
    const m = c.scope(scope);
    m.remember(d, l, result);
    m.remember(d, undefined, { ...result, status: 'missing' });
    expect(m.recall(configMap('a', '2'), l)).toBeUndefined();
    expect(m.recall(d, configMap('a', '2', '6'))).toBeUndefined();
    expect(m.recall(d, undefined)?.status).toBe('missing');
    expect(m.recall(structuredClone(d), structuredClone(l))).toBe(result); // by content, not identity
  });

  it('a degraded result (note, normalized) lives 15 s; a clean one 10 min', () => {
    let now = 0;
    const c = new ObjectDiffCache({ now: () => now });
    const m = c.scope(scope);
    const d2 = configMap('b', '1');
    m.remember(d, l, result);
    m.remember(d2, l, { ...result, mode: 'normalized', note: 'server-side dry-run forbidden (403)' });
    now = 16_000;
    expect(m.recall(d2, l)).toBeUndefined();
    expect(m.recall(d, l)).toBe(result);
    now = 10 * 60_000 + 1;
    expect(m.recall(d, l)).toBeUndefined();
  });

  it('is bounded (entries)', () => {
    const c = new ObjectDiffCache({ maxEntries: 3 });
    const m = c.scope(scope);
    for (let i = 0; i < 5; i++) m.remember(configMap(`c${i}`, '1'), undefined, result);
    expect(c.stats().entries).toBe(3);
  });
});

// The engine with the memo, against a fake apiserver: the memo changes the work done, never the result.
describe('diffApp with the memo', () => {
  const app = {
    id: 'c/flux-system/kustomization/app',
    cluster: 'c',
    controller: 'flux',
    kind: 'Kustomization',
    namespace: 'flux-system',
    name: 'app',
  } as App; // the fields diffApp reads
  const render: RenderResult = {
    objects: [desiredDeployment(2), configMap('settings', 'on')],
    renderer: 'fake',
    revision: 'main@sha1:1',
    renderHash: 'sha256:1',
  };
  const setup = () => {
    const api = new FakeApiserver();
    api.live.set('web', liveDeployment({ replicas: 2, ready: 2, rv: '10' }));
    api.live.set('settings', configMap('settings', 'on', '3'));
    const cache = new ObjectDiffCache();
    const deps = (memo: boolean): DiffDeps => ({
      conn: api.asConnection(),
      discovery: new Discovery(api.asConnection()),
      tools: { fluxRender: 'x', kustomize: 'x', workDir: '/nonexistent' },
      appObject: {},
      configMap: () => undefined,
      tracked: () => [],
      getLive: async (ref) => api.live.get(ref.name),
      render: async () => render,
      ...(memo ? { memo: cache.scope(scope) } : {}),
    });
    /** one diff with the memo: the dry-runs it sent, and whether it equals a diff without the memo */
    const run = async () => {
      const before = api.dryRuns;
      const got = await diffApp(app, deps(true));
      const sent = api.dryRuns - before;
      const fresh = await diffApp(app, deps(false));
      return { sent, got, fresh };
    };
    return { api, run, cache };
  };
  const same = (a: AppDiff, b: AppDiff) => {
    const norm = (d: AppDiff) => ({
      ...d,
      generatedAt: '',
      ownership: [...d.ownership].sort((x, y) => x.manager.localeCompare(y.manager)),
    });
    expect(norm(a)).toEqual(norm(b));
  };

  it('a second diff with nothing changed sends no dry-run, and equals a fresh diff', async () => {
    const { run } = setup();
    const first = await run();
    expect(first.sent).toBe(2);
    const second = await run();
    expect(second.sent).toBe(0);
    same(second.got, second.fresh);
    same(second.got, first.got);
  });

  it('a status write (Pods became ready) sends no dry-run', async () => {
    const { api, run } = setup();
    await run();
    api.live.set('web', liveDeployment({ replicas: 2, ready: 1, rv: '11', statusTime: '2026-01-01T00:09:00Z' }));
    const r = await run();
    expect(r.sent).toBe(0);
    same(r.got, r.fresh);
  });

  it("kubectl scale sends exactly the scaled object's dry-run, and shows the drift", async () => {
    const { api, run } = setup();
    await run();
    api.live.set('web', liveDeployment({ replicas: 5, ready: 2, rv: '12', scaledBy: 'kubectl' }));
    const r = await run();
    expect(r.sent).toBe(1);
    same(r.got, r.fresh);
    const web = r.got.objects.find((o) => o.ref.name === 'web');
    expect(web?.status).toBe('changed');
    expect(web?.changes.find((c) => c.path === 'spec.replicas')).toMatchObject({ live: 5, predicted: 2 });
  });

  it('a changed desired object (new render) sends its dry-run only', async () => {
    const { api, run } = setup();
    await run();
    render.objects = [desiredDeployment(2), configMap('settings', 'off')];
    try {
      const r = await run();
      expect(r.sent).toBe(1);
      same(r.got, r.fresh);
    } finally {
      render.objects = [desiredDeployment(2), configMap('settings', 'on')];
    }
    void api;
  });

  it("a status write that moves the time of an entry owning a changed field: no dry-run, the owner's new time", async () => {
    const { api, run } = setup();
    // Git says revision 9: the live annotation is owned by the deployment controller's status entry
    render.objects = [desiredDeployment(2, { 'deployment.kubernetes.io/revision': '9' }), configMap('settings', 'on')];
    try {
      await run();
      api.live.set('web', liveDeployment({ replicas: 2, ready: 0, rv: '11', statusTime: '2026-01-01T00:30:00Z' }));
      const r = await run();
      expect(r.sent).toBe(0);
      same(r.got, r.fresh);
      const c = r.got.objects
        .find((o) => o.ref.name === 'web')
        ?.changes.find((x) => x.path === 'metadata.annotations["deployment.kubernetes.io/revision"]');
      expect(c?.owners).toEqual([
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          time: '2026-01-01T00:30:00Z',
          subresource: 'status',
        },
      ]);
    } finally {
      render.objects = [desiredDeployment(2), configMap('settings', 'on')];
    }
  });

  it('never mutates the (cached, shared) render', async () => {
    const { run } = setup();
    const before = canonicalJson(render.objects);
    await run();
    await run();
    expect(canonicalJson(render.objects)).toBe(before);
  });
});
