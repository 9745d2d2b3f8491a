import { describe, expect, it } from 'vitest';
import { applicationToApp } from './argocd.ts';
import { helmReleaseToApp, kustomizationToApp } from './flux.ts';

const gitRepo = {
  apiVersion: 'source.toolkit.fluxcd.io/v1',
  kind: 'GitRepository',
  metadata: { name: 'repo', namespace: 'flux-system' },
  spec: { url: 'http://127.0.0.1:1/x.git', ref: { branch: 'main' } },
  status: {
    artifact: {
      revision: 'main@sha1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      digest: 'sha256:' + 'b'.repeat(64),
      url: 'http://127.0.0.1:2/a.tar.gz',
    },
    conditions: [{ type: 'Ready', status: 'True', reason: 'Succeeded' }],
  },
};
const lookup = (kind: string, ns: string, name: string) =>
  kind === 'GitRepository' && ns === 'flux-system' && name === 'repo' ? gitRepo : undefined;

const ks = (over: Record<string, unknown> = {}, status: Record<string, unknown> | null = {}) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'app', namespace: 'flux-system', labels: { env: 'dev' }, generation: 1 },
  spec: { path: './overlays/dev', prune: true, sourceRef: { kind: 'GitRepository', name: 'repo' }, ...over },
  ...(status
    ? {
        status: {
          observedGeneration: 1,
          lastAppliedRevision: 'main@sha1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
          conditions: [
            { type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: 'Applied revision' },
          ],
          inventory: {
            entries: [
              { id: 'dev_render-worker_apps_Deployment', v: 'v1' },
              { id: '_dev__Namespace', v: 'v1' },
            ],
          },
          ...status,
        },
      }
    : {}),
});

describe('kustomizationToApp', () => {
  it('maps a reconciled Kustomization', () => {
    const a = kustomizationToApp('nonprod', ks(), lookup, 'env');
    expect(a).toMatchObject({
      id: 'nonprod/flux-system/kustomization/app',
      env: 'dev',
      sync: 'Synced',
      health: 'Healthy',
      automation: { autoSync: true, prune: true, suspended: false },
      source: {
        url: 'http://127.0.0.1:1/x.git',
        ref: 'main',
        artifactDigest: expect.stringMatching(/^sha256:/),
        path: './overlays/dev',
      },
    });
    expect(a.inventory).toEqual([
      { cluster: 'nonprod', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name: 'render-worker' },
      { cluster: 'nonprod', group: '', version: 'v1', kind: 'Namespace', name: 'dev' },
    ]);
  });
  it('is OutOfSync when the applied revision lags the source artifact', () => {
    const a = kustomizationToApp(
      'c',
      ks({}, { lastAppliedRevision: 'main@sha1:cccccccccccccccccccccccccccccccccccccccc' }),
      lookup,
      'env',
    );
    expect(a.sync).toBe('OutOfSync');
  });
  it('is Degraded with the reason when Ready is False', () => {
    const a = kustomizationToApp(
      'c',
      ks(
        {},
        { conditions: [{ type: 'Ready', status: 'False', reason: 'BuildFailed', message: 'kustomize build failed' }] },
      ),
      lookup,
      'env',
    );
    expect(a).toMatchObject({
      health: 'Degraded',
      sync: 'OutOfSync',
      healthMessage: expect.stringContaining('BuildFailed'),
    });
  });
  it('is Suspended when spec.suspend is set', () => {
    const a = kustomizationToApp('c', ks({ suspend: true }), lookup, 'env');
    expect(a).toMatchObject({ health: 'Suspended', automation: { suspended: true, autoSync: false } });
  });
  it('is Unknown, with warnings, when status and source are missing', () => {
    const a = kustomizationToApp('c', ks({ sourceRef: { kind: 'GitRepository', name: 'gone' } }, null), lookup, 'env');
    expect(a).toMatchObject({ health: 'Unknown', sync: 'Unknown' });
    expect(a.warnings.join(' ')).toMatch(/not found/);
    expect(a.warnings.join(' ')).toMatch(/no status/);
  });
  it('takes env from the label, else the target namespace', () => {
    const o = ks({ targetNamespace: 'qa' });
    (o.metadata as { labels: Record<string, string> }).labels = {};
    expect(kustomizationToApp('c', o, lookup, 'env').env).toBe('qa');
  });
  it('does not throw on garbage', () => {
    expect(() => kustomizationToApp('c', 'nonsense', lookup, 'env')).not.toThrow();
    expect(() =>
      kustomizationToApp('c', { status: { inventory: { entries: 'x' }, conditions: 'y' } }, lookup, 'env'),
    ).not.toThrow();
  });
});

describe('applicationToApp', () => {
  const app = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'edge', namespace: 'argocd', ownerReferences: [{ kind: 'ApplicationSet', name: 'edges' }] },
    spec: {
      project: 'default',
      source: { repoURL: 'https://git.example/x.git', path: 'edge', targetRevision: 'main' },
      destination: { namespace: 'staging' },
      syncPolicy: { automated: { prune: true, selfHeal: false } },
    },
    status: {
      sync: { status: 'OutOfSync', revision: 'abc1234' },
      health: { status: 'Progressing', message: 'rolling out' },
      resources: [{ group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'staging', name: 'edge' }],
    },
  };
  it('maps source, status, automation and ownership', () => {
    const a = applicationToApp('nonprod', app, 'env');
    expect(a).toMatchObject({
      id: 'nonprod/argocd/application/edge',
      env: 'staging',
      sync: 'OutOfSync',
      health: 'Progressing',
      healthMessage: 'rolling out',
      automation: { autoSync: true, prune: true, selfHeal: false, suspended: false },
      owner: { kind: 'ApplicationSet', name: 'edges' },
      project: 'default',
      source: { revisionObserved: 'abc1234', revisionWanted: 'main' },
    });
    expect(a.inventory).toHaveLength(1);
  });
  it('never says "status simulated" for an annotation anyone who may annotate an Application can set (issue 40)', () => {
    const annotated = {
      ...app,
      metadata: { ...app.metadata, annotations: { 'gitops-console.dev/simulated': 'trust me' } },
    };
    expect(applicationToApp('nonprod', annotated, 'env')).not.toHaveProperty('simulated');
  });
  it('treats a manual-sync Application as not automated', () => {
    const a = applicationToApp('c', { ...app, spec: { ...app.spec, syncPolicy: {} } }, 'env');
    expect(a.automation).toEqual({ autoSync: false, selfHeal: false, prune: false, suspended: true });
  });
});

describe('helmReleaseToApp', () => {
  const oci = {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'OCIRepository',
    metadata: { name: 'podinfo', namespace: 'apps' },
    spec: { url: 'oci://registry.example/charts/podinfo', ref: { tag: '6.7.0' } },
    status: {
      artifact: { revision: '6.7.0@sha256:' + 'c'.repeat(64), digest: 'sha256:' + 'd'.repeat(64) },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
  const lookupOci = (kind: string, ns: string, name: string) =>
    kind === 'OCIRepository' && ns === 'apps' && name === 'podinfo' ? oci : undefined;
  const hr = (status: Record<string, unknown>) => ({
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    metadata: { name: 'podinfo', namespace: 'apps', labels: { env: 'staging' } },
    spec: { chartRef: { kind: 'OCIRepository', name: 'podinfo' }, interval: '5m' },
    status,
  });
  it('maps a chartRef release with its OCI source', () => {
    const a = helmReleaseToApp(
      'c',
      hr({
        conditions: [{ type: 'Ready', status: 'True', reason: 'InstallSucceeded' }],
        history: [{ chartVersion: '6.7.0' }],
      }),
      lookupOci,
      'env',
    );
    expect(a).toMatchObject({
      id: 'c/apps/helmrelease/podinfo',
      env: 'staging',
      sync: 'Synced',
      health: 'Healthy',
      source: {
        url: 'oci://registry.example/charts/podinfo',
        revisionObserved: '6.7.0',
        artifactDigest: expect.stringMatching(/^sha256:d+$/),
      },
    });
  });
  it('is Degraded and OutOfSync when the release failed', () => {
    const a = helmReleaseToApp(
      'c',
      hr({ conditions: [{ type: 'Ready', status: 'False', reason: 'UpgradeFailed', message: 'timed out' }] }),
      lookupOci,
      'env',
    );
    expect(a).toMatchObject({
      health: 'Degraded',
      sync: 'OutOfSync',
      healthMessage: expect.stringContaining('UpgradeFailed'),
    });
  });
  it("chart.spec: the HelmChart helm-controller made is the chart's artifact; its inventory is the tree", () => {
    const helmChart = {
      kind: 'HelmChart',
      metadata: { name: 'dev-status-page', namespace: 'flux-system' },
      status: { artifact: { revision: '0.2.0', digest: 'sha256:' + 'e'.repeat(64) } },
    };
    const repo = { kind: 'HelmRepository', spec: { type: 'oci', url: 'oci://127.0.0.1:5000/charts' }, status: {} };
    const look = (kind: string, ns: string, name: string) =>
      ns !== 'flux-system'
        ? undefined
        : kind === 'HelmChart' && name === 'dev-status-page'
          ? helmChart
          : kind === 'HelmRepository' && name === 'charts'
            ? repo
            : undefined;
    const obj = {
      kind: 'HelmRelease',
      metadata: { name: 'status-page', namespace: 'dev' },
      spec: {
        chart: {
          spec: {
            chart: 'status-page',
            version: '0.2.0',
            sourceRef: { kind: 'HelmRepository', name: 'charts', namespace: 'flux-system' },
          },
        },
      },
      status: {
        helmChart: 'flux-system/dev-status-page',
        conditions: [{ type: 'Ready', status: 'True', reason: 'UpgradeSucceeded' }],
        history: [{ chartVersion: '0.1.0' }],
        inventory: {
          entries: [
            { id: 'dev_status-page_apps_Deployment', v: 'v1' },
            { id: 'dev_status-page__ConfigMap', v: 'v1' },
          ],
        },
      },
    };
    const a = helmReleaseToApp('c', obj, look, 'env');
    expect(a.source).toMatchObject({
      kind: 'HelmRepository',
      url: 'oci://127.0.0.1:5000/charts',
      path: 'status-page',
      ref: '0.2.0',
      revisionWanted: '0.2.0',
      revisionObserved: '0.1.0',
      artifactDigest: 'sha256:' + 'e'.repeat(64),
    });
    // Ready, but the chart wanted is not the one installed yet
    expect(a.sync).toBe('OutOfSync');
    expect(a.inventory.map((r) => `${r.group}/${r.kind}/${r.namespace}/${r.name}`)).toEqual([
      'apps/Deployment/dev/status-page',
      '/ConfigMap/dev/status-page',
    ]);
  });
  it('is Unknown without status', () => {
    const a = helmReleaseToApp('c', { ...hr({}), status: undefined }, lookupOci, 'env');
    expect(a).toMatchObject({ health: 'Unknown', sync: 'Unknown' });
  });
});
