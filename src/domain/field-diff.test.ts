import { describe, expect, it } from 'vitest';
import { fieldDiff, flattenObject, isKeyLeaf, pointerPaths } from './field-diff.ts';

const dep = (replicas: number, env: Array<{ name: string; value: string }>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'render-worker',
    namespace: 'dev',
    labels: { 'app.kubernetes.io/name': 'render-worker' },
    ...extra,
  },
  spec: {
    replicas,
    template: {
      spec: { containers: [{ name: 'render', image: 'r:1', env, ports: [{ containerPort: 8080, protocol: 'TCP' }] }] },
    },
  },
});

const mf = (
  manager: string,
  operation: 'Apply' | 'Update',
  fieldsV1: Record<string, unknown>,
  subresource?: string,
) => ({
  manager,
  operation,
  apiVersion: 'apps/v1',
  time: '2026-11-30T12:00:00Z',
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...(subresource ? { subresource } : {}),
});

const controllerFields = {
  'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {} } },
  'f:spec': {
    'f:template': {
      'f:spec': {
        'f:containers': {
          'k:{"name":"render"}': {
            '.': {},
            'f:image': {},
            'f:name': {},
            'f:env': { 'k:{"name":"RENDER_QUALITY"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
            'f:ports': {
              'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
            },
          },
        },
      },
    },
  },
};

describe('flattenObject', () => {
  it('uses merge keys for keyed lists and skips status and server metadata', () => {
    const f = flattenObject({
      ...dep(4, [{ name: 'A', value: '1' }]),
      status: { replicas: 4 },
      metadata: { name: 'x', resourceVersion: '9', managedFields: [] },
    });
    expect([...f.keys()]).toEqual(
      expect.arrayContaining([
        'spec.replicas',
        'spec.template.spec.containers[name=render].image',
        'spec.template.spec.containers[name=render].env[name=A].value',
        'spec.template.spec.containers[name=render].ports[containerPort=8080,protocol=TCP].containerPort',
      ]),
    );
    expect([...f.keys()].some((k) => k.startsWith('status') || k.includes('resourceVersion'))).toBe(false);
  });
});

describe('flattenObject paths (the managed-fields format)', () => {
  it('brackets keys that are not identifiers without a dot before them', () => {
    const f = flattenObject({
      metadata: { annotations: { 'service.beta.kubernetes.io/foo': 'x' }, labels: { 'app.kubernetes.io/name': 'r' } },
      data: { 'api-key': 'k', 'tls.crt': 'c' },
    });
    expect([...f.keys()]).toEqual([
      'metadata.annotations["service.beta.kubernetes.io/foo"]',
      'metadata.labels["app.kubernetes.io/name"]',
      'data["api-key"]',
      'data["tls.crt"]',
    ]);
  });
  it('keys a port Git writes without a protocol with protocol=TCP, as Server-Side Apply does', () => {
    const f = flattenObject({
      spec: {
        ports: [{ port: 80, targetPort: 8080 }],
        template: {
          spec: {
            containers: [{ name: 'r', ports: [{ containerPort: 53, protocol: 'UDP' }, { containerPort: 8080 }] }],
          },
        },
      },
    });
    expect([...f.keys()]).toEqual([
      'spec.ports[port=80,protocol=TCP].port',
      'spec.ports[port=80,protocol=TCP].targetPort',
      'spec.template.spec.containers[name=r].name',
      'spec.template.spec.containers[name=r].ports[containerPort=53,protocol=UDP].containerPort',
      'spec.template.spec.containers[name=r].ports[containerPort=53,protocol=UDP].protocol',
      'spec.template.spec.containers[name=r].ports[containerPort=8080,protocol=TCP].containerPort',
    ]);
  });
});

describe('isKeyLeaf', () => {
  it.each<[string, boolean]>([
    ['spec.containers[name=render].name', true],
    ['spec.containers[name=render].image', false],
    ['spec.ports[containerPort=8080,protocol=TCP].protocol', true],
    ['spec.ports[containerPort=8080,protocol=TCP].name', false],
    ['env[name="a].name"].name', true],
    ['env[name="a].name"].value', false],
    ['data["name"]', false],
    ['spec.finalizers[=name]', false],
    ['name', false],
  ])('%s → %s', (path, want) => expect(isKeyLeaf(path)).toBe(want));
});

describe('pointerPaths (Argo CD jsonPointers)', () => {
  const live = {
    metadata: { annotations: { 'service.beta.kubernetes.io/foo': 'x' } },
    spec: { template: { spec: { containers: [{ name: 'render', ports: [{ containerPort: 8080 }] }] } } },
  };
  it.each<[string, string[]]>([
    ['/spec/replicas', ['spec.replicas']],
    [
      '/metadata/annotations/service.beta.kubernetes.io~1foo',
      ['metadata.annotations["service.beta.kubernetes.io/foo"]'],
    ],
    ['/data/a~0b', ['data["a~b"]']],
    [
      '/spec/template/spec/containers/0/image',
      ['spec.template.spec.containers[0].image', 'spec.template.spec.containers[name=render].image'],
    ],
    [
      '/spec/template/spec/containers/0/ports/0',
      [
        'spec.template.spec.containers[0].ports[0]',
        'spec.template.spec.containers[name=render].ports[containerPort=8080,protocol=TCP]',
      ],
    ],
    ['/spec/template/spec/containers/3/image', ['spec.template.spec.containers[3].image']],
    ['spec/replicas', []],
  ])('%s → %j', (ptr, want) => expect(pointerPaths(ptr, [live])).toEqual(want));
});

describe('fieldDiff', () => {
  const desired = dep(4, [{ name: 'RENDER_QUALITY', value: 'standard' }]);
  it('classifies a kubectl-edit change of Git-owned fields as drift, with the manager', () => {
    const live = dep(
      12,
      [
        { name: 'RENDER_QUALITY', value: 'standard' },
        { name: 'DEBUG', value: '1' },
      ],
      {
        managedFields: [
          mf('kustomize-controller', 'Apply', controllerFields),
          mf('kubectl-edit', 'Update', {
            'f:spec': {
              'f:replicas': {},
              'f:template': {
                'f:spec': {
                  'f:containers': {
                    'k:{"name":"render"}': {
                      'f:env': { 'k:{"name":"DEBUG"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                    },
                  },
                },
              },
            },
          }),
        ],
      },
    );
    // the dry-run result keeps kubectl-edit's DEBUG variable (another manager's field): predicted = desired + DEBUG
    const predicted = dep(4, [
      { name: 'RENDER_QUALITY', value: 'standard' },
      { name: 'DEBUG', value: '1' },
    ]);
    const changes = fieldDiff({
      desired,
      predicted,
      live,
      controllerManagers: ['kustomize-controller'],
      mode: 'server-dry-run',
    });
    const byPath = Object.fromEntries(changes.map((c) => [c.path, c]));
    expect(byPath['spec.replicas']).toMatchObject({
      predicted: 4,
      live: 12,
      class: 'drift',
      owners: [{ manager: 'kubectl-edit', operation: 'Update' }],
    });
    // a field Git never declared, added by hand: drift too (Flux removes it on the next apply)
    expect(byPath['spec.template.spec.containers[name=render].env[name=DEBUG].value']).toMatchObject({
      live: '1',
      class: 'drift',
    });
    expect(byPath['spec.template.spec.containers[name=render].env[name=DEBUG].value']?.desired).toBeUndefined();
  });
  it('classifies a field another controller owns as conflict, and honours ignore rules', () => {
    const live = dep(9, [{ name: 'RENDER_QUALITY', value: 'standard' }], {
      managedFields: [
        mf('kustomize-controller', 'Apply', controllerFields),
        mf('kube-controller-manager', 'Update', { 'f:spec': { 'f:replicas': {} } }, 'scale'),
      ],
    });
    expect(
      fieldDiff({
        desired,
        predicted: desired,
        live,
        controllerManagers: ['kustomize-controller'],
        mode: 'server-dry-run',
      }),
    ).toEqual([
      expect.objectContaining({
        path: 'spec.replicas',
        class: 'conflict',
        owners: [expect.objectContaining({ manager: 'kube-controller-manager', subresource: 'scale' })],
      }),
    ]);
    expect(
      fieldDiff({
        desired,
        predicted: desired,
        live,
        controllerManagers: ['kustomize-controller'],
        mode: 'server-dry-run',
        ignore: { jsonPointers: ['/spec/replicas'] },
      })[0]?.class,
    ).toBe('ignored');
    expect(
      fieldDiff({
        desired,
        predicted: desired,
        live,
        controllerManagers: ['kustomize-controller'],
        mode: 'server-dry-run',
        ignore: { managedFieldsManagers: ['kube-controller-manager'] },
      })[0]?.class,
    ).toBe('ignored');
  });
  it('classifies a Git change not yet applied as pending', () => {
    const next = dep(4, [{ name: 'RENDER_QUALITY', value: 'ultra' }]);
    const live = dep(4, [{ name: 'RENDER_QUALITY', value: 'standard' }], {
      managedFields: [mf('kustomize-controller', 'Apply', controllerFields)],
    });
    const changes = fieldDiff({
      desired: next,
      predicted: next,
      live,
      controllerManagers: ['kustomize-controller'],
      mode: 'server-dry-run',
    });
    expect(changes).toEqual([
      expect.objectContaining({
        path: 'spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value',
        predicted: 'ultra',
        live: 'standard',
        class: 'pending',
      }),
    ]);
  });
  it('reports apiserver defaults separately (equal after dry-run, absent from Git)', () => {
    const predicted = { ...desired, spec: { ...desired.spec, revisionHistoryLimit: 10 } };
    const live = {
      ...predicted,
      metadata: { ...predicted.metadata, managedFields: [mf('kustomize-controller', 'Apply', controllerFields)] },
    };
    const changes = fieldDiff({
      desired,
      predicted,
      live,
      controllerManagers: ['kustomize-controller'],
      mode: 'server-dry-run',
    });
    expect(changes).toEqual([expect.objectContaining({ path: 'spec.revisionHistoryLimit', class: 'defaulted' })]);
  });
});
