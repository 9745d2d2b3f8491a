import { describe, expect, it } from 'vitest';
import { compareRenders, targetNamespace } from './render-compare.ts';

const deploy = (image: string, replicas = 2) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'render-worker', namespace: 'dev', labels: { app: 'render-worker' } },
  spec: {
    replicas,
    template: {
      spec: {
        containers: [
          { name: 'render', image },
          { name: 'sidecar', image: 'envoy:1' },
        ],
      },
    },
  },
});
const cm = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'dev' },
  data: { a: '1' },
});

describe('two renders compared', () => {
  it('names the changed image by its container, the added and removed objects, and counts the rest', () => {
    const c = compareRenders(
      [deploy('render:1.4.2'), cm('settings-abc'), cm('kept')],
      [deploy('render:1.4.3'), cm('settings-def'), cm('kept')],
    );
    expect(c.changed).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace: 'dev',
        name: 'render-worker',
        fields: [
          { path: 'spec.template.spec.containers[name=render].image', from: 'render:1.4.2', to: 'render:1.4.3' },
        ],
      },
    ]);
    expect(c.added.map((r) => r.name)).toEqual(['settings-def']);
    expect(c.removed.map((r) => r.name)).toEqual(['settings-abc']);
    expect(c.unchanged).toBe(1);
  });

  it('a field only on one side has only that side; identical renders compare empty', () => {
    const c = compareRenders([deploy('x:1')], [{ ...deploy('x:1'), spec: { ...deploy('x:1').spec, paused: true } }]);
    expect(c.changed[0]?.fields).toEqual([{ path: 'spec.paused', to: true }]);
    expect(compareRenders([deploy('x:1')], [deploy('x:1')])).toEqual({
      added: [],
      removed: [],
      changed: [],
      unchanged: 1,
    });
  });
});

// the seed's digital-human overlays (sandbox/seed.ts): the same base, each environment its own namespace, replicas,
// images and generated ConfigMap (its name carries the hash of its data)
const overlay = (env: string, o: { replicas: number; image: string; settings: string }) => [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'render-worker', namespace: env, labels: { env } },
    spec: { replicas: o.replicas, template: { spec: { containers: [{ name: 'render', image: o.image }] } } },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'render-worker', namespace: env, labels: { env } } },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `env-settings-${o.settings}`, namespace: env, labels: { env } },
    data: { ENVIRONMENT: env },
  },
  // outside the app's target: the same namespace in every environment
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dashboards', namespace: 'monitoring' }, data: { a: '1' } },
  // cluster-scoped
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'render-reader' }, rules: [] },
];
const dev = overlay('dev', { replicas: 4, image: 'render:1.5.0-rc.1', settings: 'c6mk59h8f4' });
const staging = overlay('staging', { replicas: 6, image: 'render:1.4.2', settings: 'b7dt2g9hkm' });

describe('one app in two environments compared', () => {
  it("each render's target namespace: where most of its namespaced objects are; none or a tie: null", () => {
    expect(targetNamespace(dev)).toBe('dev');
    expect(targetNamespace(staging)).toBe('staging');
    expect(targetNamespace([dev[4] as Record<string, unknown>])).toBeNull();
    expect(targetNamespace([dev[0], dev[3]] as Array<Record<string, unknown>>)).toBeNull();
  });

  it('matches objects by kind and name in each target namespace: changes, not added and removed', () => {
    const c = compareRenders(dev, staging, { from: 'dev', to: 'staging' });
    expect(c.added).toEqual([]);
    expect(c.removed).toEqual([]);
    // the same namespace outside the targets, and the cluster-scoped object, are matched as themselves
    expect(c.unchanged).toBe(2);
    // (ordered by group, kind, namespace and name: the core group first)
    expect(c.changed.map((o) => `${o.kind} ${o.fromNamespace}→${o.namespace}/${o.name}`)).toEqual([
      'ConfigMap dev→staging/env-settings-b7dt2g9hkm',
      'Service dev→staging/render-worker',
      'Deployment dev→staging/render-worker',
    ]);
    const deploy = c.changed.find((o) => o.kind === 'Deployment');
    // the namespace is the object's identity here, not one of its changes
    expect(deploy?.fields).toEqual([
      { path: 'metadata.labels.env', from: 'dev', to: 'staging' },
      { path: 'spec.replicas', from: 4, to: 6 },
      { path: 'spec.template.spec.containers[name=render].image', from: 'render:1.5.0-rc.1', to: 'render:1.4.2' },
    ]);
    // the generated ConfigMap: one on each side with the same name before kustomize's hash
    const settings = c.changed.find((o) => o.kind === 'ConfigMap');
    expect(settings).toMatchObject({ fromName: 'env-settings-c6mk59h8f4', name: 'env-settings-b7dt2g9hkm' });
    expect(settings?.fields).toContainEqual({ path: 'data.ENVIRONMENT', from: 'dev', to: 'staging' });
    expect(settings?.fields).toContainEqual({
      path: 'metadata.name',
      from: 'env-settings-c6mk59h8f4',
      to: 'env-settings-b7dt2g9hkm',
    });
  });

  it('an object in another namespace keeps it: a namespace named like the other target is not that target', () => {
    const inStaging = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'staging' } };
    const inDev = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'dev' } };
    // from's `x` is in another namespace (its target is dev), to's `x` in its target: two objects
    const c = compareRenders([...dev, inStaging], [...staging, inDev], { from: 'dev', to: 'staging' });
    expect(c.removed).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'staging', name: 'x' }]);
    expect(c.added).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'x' }]);
    // a target that is not known matches nothing across namespaces
    const unknown = compareRenders(dev, staging, { from: 'dev', to: null });
    expect(unknown.changed).toEqual([]);
    expect(unknown.added).toHaveLength(3);
    expect(unknown.removed).toHaveLength(3);
  });

  it('generated names are paired only one to one', () => {
    const cm = (ns: string, name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
    });
    const c = compareRenders([cm('dev', 'a-c6mk59h8f4'), cm('dev', 'a-h8f4c6mk59')], [cm('staging', 'a-b7dt2g9hkm')], {
      from: 'dev',
      to: 'staging',
    });
    expect(c.changed).toEqual([]);
    expect(c.removed.map((r) => r.name)).toEqual(['a-c6mk59h8f4', 'a-h8f4c6mk59']);
    expect(c.added.map((r) => r.name)).toEqual(['a-b7dt2g9hkm']);
  });

  it("one app's two releases: a name's namespace is its own, generated names are not paired", () => {
    const c = compareRenders(dev, overlay('dev', { replicas: 4, image: 'render:1.5.0-rc.1', settings: 'h8f4c6mk59' }));
    expect(c.changed).toEqual([]);
    expect(c.added.map((r) => r.name)).toEqual(['env-settings-h8f4c6mk59']);
    expect(c.removed.map((r) => r.name)).toEqual(['env-settings-c6mk59h8f4']);
  });
});
