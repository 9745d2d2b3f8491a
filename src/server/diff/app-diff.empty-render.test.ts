// An empty render is not "ok, nothing to do": the diff's extraneous rows and the prune plan (domain/prune.ts)
// agree: every tracked object is extraneous, the summary says the controller would delete them, and a prune
// preview of the same state needs an override with the same reason.
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import { DEFAULT_PRUNE_LIMITS, planPrune } from '../../domain/prune.ts';
import { refOf } from '../../domain/tree.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import type { Discovery } from '../kube/discovery.ts';
import { diffApp, type DiffDeps } from './app-diff.ts';
import type { Obj, RenderResult, RenderTools } from './render.ts';

const app = (prune: boolean): App => ({
  id: 'nonprod/flux-system/kustomization/web-dev',
  cluster: 'nonprod',
  controller: 'flux',
  kind: 'Kustomization',
  namespace: 'flux-system',
  name: 'web-dev',
  env: 'dev',
  source: {},
  automation: { autoSync: true, selfHeal: true, prune, suspended: false },
  sync: 'Synced',
  health: 'Healthy',
  healthMessage: '',
  conditions: [],
  inventory: [],
  warnings: [],
});

const cm = (name: string, annotations: Record<string, string> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'dev', uid: `uid-${name}`, resourceVersion: '1', annotations },
  data: { a: '1' },
});

const renderOf = (objects: Obj[]): RenderResult => ({
  objects,
  renderer: 'flux-render test',
  revision: 'main@sha1:abc',
  renderHash: 'sha256:0',
});

function deps(tracked: Obj[], rendered: Obj[]): DiffDeps {
  const unused = () => {
    throw new Error('not used by this test');
  };
  return {
    conn: { json: unused, request: unused } as unknown as ClusterConnection,
    discovery: { path: unused } as unknown as Discovery,
    tools: {} as RenderTools,
    getLive: async () => undefined,
    appObject: {},
    configMap: () => undefined,
    tracked: () => tracked,
    render: async () => renderOf(rendered),
  };
}

describe('the diff of an empty render', () => {
  const tracked = [cm('a'), cm('b'), cm('kept', { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' })];

  it('says the controller would delete the tracked objects and that a preview needs an override', async () => {
    const d = await diffApp(app(true), deps(tracked, []));
    expect(d.state).toBe('ok');
    expect(d.emptyRender).toBe(true);
    expect(d.counts.extraneous).toBe(3);
    expect(d.summary).toMatch(
      /^the render is empty: the controller would delete 2 objects \(1 protected from pruning stay\); a prune preview would need an override; 3 extraneous$/,
    );
    expect(d.objects.every((o) => o.status === 'extraneous' && /render is empty/.test(o.note ?? ''))).toBe(true);
    expect(d.prune).toMatchObject({ state: 'needs-override', deletions: 2, protected: 1 });
    expect(d.prune?.reasons.join(' ')).toMatch(/the render is empty: all 3 objects the app manages would be deleted/);
  });

  it('agrees with the prune plan of the same state (state, reasons, deletions)', async () => {
    const d = await diffApp(app(true), deps(tracked, []));
    const plan = planPrune({
      controller: 'flux',
      inventory: tracked.map((o) => refOf('nonprod', o)),
      desired: [],
      live: tracked,
      limits: DEFAULT_PRUNE_LIMITS,
    });
    expect(d.prune?.state).toBe(plan.state);
    expect(d.prune?.reasons).toEqual(plan.reasons);
    expect(d.objects.map((o) => o.ref.name).sort()).toEqual(plan.candidates.map((c) => c.ref.name).sort());
  });

  it('without prune the objects would stay untracked, and a preview still needs an override', async () => {
    const d = await diffApp(app(false), deps(tracked, []));
    expect(d.summary).toMatch(/^the render is empty: 2 objects would be left live and untracked/);
    expect(d.prune?.state).toBe('needs-override');
  });

  it('an empty render of an app that tracks nothing is just empty', async () => {
    const d = await diffApp(app(true), deps([], []));
    expect(d.emptyRender).toBeUndefined();
    expect(d.summary).toBe('no differences: live matches Git');
    expect(d.prune).toMatchObject({ state: 'nothing', deletions: 0 });
  });

  it('a failed render is unknown, never empty', async () => {
    const d = await diffApp(app(true), {
      ...deps(tracked, []),
      render: async () => {
        throw new Error('kustomize build failed');
      },
    });
    expect(d.state).toBe('unknown');
    expect(d.counts.extraneous).toBe(0);
    expect(d.prune?.state).toBe('unknown');
  });
});
