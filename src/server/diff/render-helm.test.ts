import { describe, expect, it } from 'vitest';
import {
  composeHelmValues,
  helmReleaseName,
  mergeValues,
  renderHelmRelease,
  withHelmControllerMetadata,
} from './render-helm.ts';
import { RenderError, type Obj } from './render.ts';
import { helmChartOf } from '../gitops/flux.ts';

const hr = (spec: Obj, md: Obj = {}): Obj => ({
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name: 'status-page', namespace: 'dev', ...md },
  spec,
});
const cms: Record<string, Obj> = {
  base: { data: { 'values.yaml': 'replicas: 2\nresources:\n  limits:\n    cpu: 100m\n    memory: 64Mi\n' } },
  other: { data: { 'custom.yaml': 'message: from the other map\n', tag: '1.2.3', count: '7', flag: 'true' } },
  broken: { data: { 'values.yaml': 'a: [1, 2\n' } },
  scalar: { data: { 'values.yaml': '- a list\n' } },
};
const lookup = (ns: string, name: string) => (ns === 'dev' ? cms[name] : undefined);

describe('HelmRelease values, as helm-controller composes them', () => {
  it('merges valuesFrom in order, then spec.values on top; maps merge key by key, lists are replaced', () => {
    const v = composeHelmValues(
      hr({
        valuesFrom: [
          { kind: 'ConfigMap', name: 'base' },
          { kind: 'ConfigMap', name: 'other', valuesKey: 'custom.yaml' },
          { kind: 'ConfigMap', name: 'other', valuesKey: 'tag', targetPath: 'image.tag' },
          { kind: 'ConfigMap', name: 'other', valuesKey: 'count', targetPath: 'workers.count' },
          { kind: 'ConfigMap', name: 'other', valuesKey: 'flag', targetPath: 'workers.enabled' },
          { kind: 'ConfigMap', name: 'absent', optional: true },
        ],
        values: { replicas: 3, resources: { limits: { cpu: '200m' } }, message: 'inline wins' },
      }),
      lookup,
    );
    expect(v).toEqual({
      replicas: 3,
      resources: { limits: { cpu: '200m', memory: '64Mi' } },
      message: 'inline wins',
      image: { tag: '1.2.3' },
      workers: { count: 7, enabled: true },
    });
    expect(mergeValues({ list: [1, 2], keep: 1 }, { list: [3] })).toEqual({ list: [3], keep: 1 });
  });

  it('never guesses: a Secret, a missing map or key, and values that are not a YAML map are errors', () => {
    const err = (spec: Obj) => {
      try {
        composeHelmValues(hr(spec), lookup);
      } catch (e) {
        expect(e).toBeInstanceOf(RenderError);
        return (e as Error).message;
      }
      return 'no error';
    };
    expect(err({ valuesFrom: [{ kind: 'Secret', name: 'db' }] })).toMatch(
      /Secret\/db: the console does not read Secrets/,
    );
    expect(err({ valuesFrom: [{ kind: 'ConfigMap', name: 'absent' }] })).toMatch(/ConfigMap\/absent not found/);
    expect(err({ valuesFrom: [{ kind: 'ConfigMap', name: 'base', valuesKey: 'nope' }] })).toMatch(/no key nope/);
    expect(err({ valuesFrom: [{ kind: 'ConfigMap', name: 'broken' }] })).toMatch(/is not YAML/);
    expect(err({ valuesFrom: [{ kind: 'ConfigMap', name: 'scalar' }] })).toMatch(/not a map of values/);
  });

  it("the release name and helm-controller's labels", () => {
    expect(helmReleaseName(hr({}))).toBe('status-page');
    expect(helmReleaseName(hr({ targetNamespace: 'web' }))).toBe('web-status-page');
    expect(helmReleaseName(hr({ targetNamespace: 'web', releaseName: 'sp' }))).toBe('sp');
    const o = withHelmControllerMetadata(
      { kind: 'ConfigMap', metadata: { name: 'x', labels: { a: '1', 'helm.toolkit.fluxcd.io/name': 'forged' } } },
      hr({ commonMetadata: { labels: { team: 'platform' }, annotations: { owner: 'sre' } } }),
    );
    expect(o.metadata).toEqual({
      name: 'x',
      labels: {
        a: '1',
        team: 'platform',
        'app.kubernetes.io/managed-by': 'Helm',
        'helm.toolkit.fluxcd.io/name': 'status-page',
        'helm.toolkit.fluxcd.io/namespace': 'dev',
      },
      annotations: {
        owner: 'sre',
        'meta.helm.sh/release-name': 'status-page',
        'meta.helm.sh/release-namespace': 'dev',
      },
    });
  });

  it('a release it cannot reproduce is an error, not an empty render', async () => {
    const tools = { fluxRender: 'x', kustomize: 'x', helm: '/bin/false', workDir: '/tmp' };
    await expect(renderHelmRelease(hr({ postRenderers: [{ kustomize: {} }] }), {}, tools)).rejects.toThrow(
      /post-renderers/,
    );
    await expect(renderHelmRelease(hr({}), undefined, tools)).rejects.toThrow(/source object is not found/);
    await expect(renderHelmRelease(hr({}), { status: {} }, tools)).rejects.toThrow(/no artifact yet/);
    // a version change helm-controller has not taken into its HelmChart yet (suspended): not the old chart's render
    const stale = {
      kind: 'HelmChart',
      spec: { version: '0.2.0' },
      status: { artifact: { url: 'http://127.0.0.1:1/x.tgz' } },
    };
    await expect(renderHelmRelease(hr({ chart: { spec: { version: '0.1.0' } } }), stale, tools)).rejects.toThrow(
      /still asks for version 0\.2\.0: helm-controller has not fetched 0\.1\.0 yet/,
    );
  });

  it("the chart's source: chartRef, else the HelmChart helm-controller made", () => {
    expect(helmChartOf(hr({ chartRef: { kind: 'OCIRepository', name: 'podinfo', namespace: 'flux-system' } }))).toEqual(
      {
        kind: 'OCIRepository',
        namespace: 'flux-system',
        name: 'podinfo',
      },
    );
    const spec = {
      chart: {
        spec: { chart: 'status-page', sourceRef: { kind: 'HelmRepository', name: 'charts', namespace: 'flux-system' } },
      },
    };
    expect(helmChartOf(hr(spec))).toEqual({ kind: 'HelmChart', namespace: 'flux-system', name: 'dev-status-page' });
    expect(helmChartOf({ ...hr(spec), status: { helmChart: 'flux-system/other' } })).toEqual({
      kind: 'HelmChart',
      namespace: 'flux-system',
      name: 'other',
    });
  });
});
