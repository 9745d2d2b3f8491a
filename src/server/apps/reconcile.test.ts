import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import { reconcileTargets } from './reconcile.ts';

const app = (over: Partial<App>): App =>
  ({
    id: 'x',
    cluster: 'nonprod',
    controller: 'flux',
    kind: 'Kustomization',
    namespace: 'apps',
    name: 'web',
    source: { kind: 'GitRepository', name: 'repo' },
    ...over,
  }) as App;
const at = '2026-12-02T10:00:00Z';
const names = (ts: ReturnType<typeof reconcileTargets>) => ts.map((t) => `${t.kind}/${t.namespace}/${t.name}`);

describe('reconcile now: what is annotated', () => {
  it("a Kustomization and its source, in the source's own namespace", () => {
    expect(names(reconcileTargets(app({}), at))).toEqual(['Kustomization/apps/web', 'GitRepository/apps/repo']);
    const raw = { spec: { sourceRef: { kind: 'GitRepository', name: 'repo', namespace: 'flux-system' } } };
    expect(names(reconcileTargets(app({}), at, raw))).toEqual([
      'Kustomization/apps/web',
      'GitRepository/flux-system/repo',
    ]);
  });
  it('a HelmRelease and the HelmChart helm-controller made for it (never its HelmRepository in the wrong namespace)', () => {
    const hr = app({
      kind: 'HelmRelease',
      namespace: 'dev',
      name: 'status-page',
      source: { kind: 'HelmRepository', name: 'charts' },
    });
    const raw = {
      metadata: { name: 'status-page', namespace: 'dev' },
      spec: {
        chart: {
          spec: {
            chart: 'status-page',
            sourceRef: { kind: 'HelmRepository', name: 'charts', namespace: 'flux-system' },
          },
        },
      },
      status: { helmChart: 'flux-system/dev-status-page' },
    };
    const ts = reconcileTargets(hr, at, raw);
    expect(names(ts)).toEqual(['HelmRelease/dev/status-page', 'HelmChart/flux-system/dev-status-page']);
    expect(ts[0]?.annotations).toEqual({ 'reconcile.fluxcd.io/requestedAt': at });
    expect(names(reconcileTargets(hr, at))).toEqual(['HelmRelease/dev/status-page']);
  });
});
