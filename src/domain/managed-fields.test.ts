/**
 * Tests for the Server-Side-Apply managedFields decoder. Fixtures are written
 * in the shape kube-apiserver returns them (`kubectl get -o json
 * --show-managed-fields`): entries ordered manager, operation, apiVersion,
 * time, fieldsType, fieldsV1, subresource, with k:/v: keys as compact JSON.
 *
 * Over 500 lines on purpose: fixtures in the apiserver's own shape are long, and the cases share them.
 */
import { describe, expect, it } from 'vitest';
import sandbox from './fixtures/managed-fields-sandbox.json' with { type: 'json' };
import handwritten from './fixtures/field-paths-handwritten.json' with { type: 'json' };
import {
  childPath,
  fieldPath,
  fieldPathToPointer,
  fieldSegmentName,
  formatFieldSegment,
  formatKeyFieldsSegment,
  formatKeyedSegment,
  formatKeyValue,
  formatSetSegment,
  joinFieldPath,
  keyedSegmentFields,
  managersOf,
  ownersByPath,
  splitFieldPath,
  type FieldOwner,
} from './managed-fields.ts';

type O = Record<string, unknown>;

const T0 = '2026-11-30T12:00:00Z';
const T1 = '2026-11-30T12:05:00Z';
const T2 = '2026-11-30T12:07:31Z';

const withManagedFields = (managedFields: unknown, kind = 'Deployment'): O => ({
  apiVersion: kind === 'Service' ? 'v1' : 'apps/v1',
  kind,
  metadata: { name: 'render', namespace: 'media', managedFields },
});

/** One FieldsV1 entry with the given fields trie. */
const entry = (manager: string, operation: string, fieldsV1: unknown, extra: O = {}): O => ({
  manager,
  operation,
  apiVersion: 'apps/v1',
  time: T0,
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...extra,
});

/** Paths owned by a single Apply entry with the given trie (sorted for order-insensitive comparison). */
const pathsOf = (fieldsV1: unknown): string[] =>
  Object.keys(ownersByPath(withManagedFields([entry('m', 'Apply', fieldsV1)]))).sort();

// ---------------------------------------------------------------- fixtures

/** managedFields of a Deployment applied by Flux, then edited, scaled by an HPA, and reported on by the controller. */
const deploymentManagedFields = [
  {
    manager: 'kustomize-controller',
    operation: 'Apply',
    apiVersion: 'apps/v1',
    time: T0,
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': {
        'f:labels': {
          'f:app.kubernetes.io/name': {},
          'f:kustomize.toolkit.fluxcd.io/name': {},
          'f:kustomize.toolkit.fluxcd.io/namespace': {},
        },
      },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"render"}': {
                '.': {},
                'f:env': {
                  'k:{"name":"RENDER_QUALITY"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                },
                'f:image': {},
                'f:name': {},
                'f:ports': {
                  'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {} },
                },
              },
            },
          },
        },
      },
    },
  },
  {
    manager: 'kubectl-edit',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: T1,
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': {
        'f:annotations': { '.': {}, 'f:ops.example.com/owner': {} },
        'f:labels': { 'f:app.kubernetes.io/name': {} },
      },
      'f:spec': {
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"render"}': {
                'f:env': {
                  'k:{"name":"RENDER_DEBUG"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                },
                'f:resources': { 'f:limits': { '.': {}, 'f:memory': {} } },
              },
            },
          },
        },
      },
    },
  },
  {
    manager: 'kube-controller-manager',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: T2,
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:replicas': {} } },
    subresource: 'scale',
  },
  {
    manager: 'kube-controller-manager',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: T2,
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': {
        'f:annotations': { '.': {}, 'f:deployment.kubernetes.io/revision': {} },
      },
      'f:status': {
        'f:availableReplicas': {},
        'f:conditions': {
          '.': {},
          'k:{"type":"Available"}': {
            '.': {},
            'f:lastTransitionTime': {},
            'f:lastUpdateTime': {},
            'f:message': {},
            'f:reason': {},
            'f:status': {},
            'f:type': {},
          },
          'k:{"type":"Progressing"}': {
            '.': {},
            'f:lastTransitionTime': {},
            'f:lastUpdateTime': {},
            'f:message': {},
            'f:reason': {},
            'f:status': {},
            'f:type': {},
          },
        },
        'f:observedGeneration': {},
        'f:readyReplicas': {},
        'f:replicas': {},
        'f:updatedReplicas': {},
      },
    },
    subresource: 'status',
  },
];

/** A Service applied by kustomize-controller: ports keyed by port+protocol, atomic selector, a finalizer set. */
const serviceManagedFields = [
  {
    manager: 'kustomize-controller',
    operation: 'Apply',
    apiVersion: 'v1',
    time: T0,
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': {
        'f:annotations': { 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
        'f:finalizers': { 'v:"example.com/finalizer"': {} },
        'f:labels': { 'f:app.kubernetes.io/name': {} },
      },
      'f:spec': {
        'f:ports': {
          'k:{"port":80,"protocol":"TCP"}': {
            '.': {},
            'f:name': {},
            'f:port': {},
            'f:protocol': {},
            'f:targetPort': {},
          },
          'k:{"port":53,"protocol":"UDP"}': { '.': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} },
        },
        'f:selector': {},
        'f:type': {},
      },
    },
  },
];

const deployment = withManagedFields(deploymentManagedFields);
const service = withManagedFields(serviceManagedFields, 'Service');

const KUSTOMIZE: FieldOwner = { manager: 'kustomize-controller', operation: 'Apply', time: T0 };
const EDIT: FieldOwner = { manager: 'kubectl-edit', operation: 'Update', time: T1 };
const KCM_SCALE: FieldOwner = {
  manager: 'kube-controller-manager',
  operation: 'Update',
  time: T2,
  subresource: 'scale',
};
const KCM_STATUS: FieldOwner = {
  manager: 'kube-controller-manager',
  operation: 'Update',
  time: T2,
  subresource: 'status',
};

// ---------------------------------------------------------------- segments

describe('segment formatting', () => {
  it.each([
    ['spec', 'spec'],
    ['_x9', '_x9'],
    ['app.kubernetes.io/name', '["app.kubernetes.io/name"]'],
    ['9lives', '["9lives"]'],
    ['with-dash', '["with-dash"]'],
    ['', '[""]'],
    ['q"uote', '["q\\"uote"]'],
  ])('field %j → %s', (name, want) => expect(formatFieldSegment(name)).toBe(want));

  it.each<[unknown, string]>([
    ['render', 'render'],
    ['example.com/finalizer', 'example.com/finalizer'],
    ['a,b', '"a,b"'],
    ['a]b', '"a]b"'],
    ['a=b', '"a=b"'],
    ['two words', '"two words"'],
    ['tab\there', '"tab\\there"'],
    ['', '""'],
    ['"quoted"', '"\\"quoted\\""'],
    [8080, '8080'],
    [1.5, '1.5'],
    [true, 'true'],
    [null, 'null'],
    [{ a: 1 }, '{"a":1}'],
  ])('value %j → %s', (value, want) => expect(formatKeyValue(value)).toBe(want));

  it.each([
    ['{"name":"render"}', '[name=render]'],
    ['{"containerPort":8080,"protocol":"TCP"}', '[containerPort=8080,protocol=TCP]'],
    ['{"protocol":"TCP","containerPort":8080}', '[protocol=TCP,containerPort=8080]'],
    ['{"port":80,"protocol":"TCP"}', '[port=80,protocol=TCP]'],
    ['{"name":"has space"}', '[name="has space"]'],
    ['{"name":"a=b,c"}', '[name="a=b,c"]'],
    ['{ "name" : "spaced-json" }', '[name=spaced-json]'],
    ['{"name":', '[{"name":]'],
    ['not json', '[not json]'],
    ['{}', '[{}]'],
    ['[1,2]', '[[1,2]]'],
    ['"str"', '["str"]'],
  ])('k:%s → %s', (json, want) => expect(formatKeyedSegment(json)).toBe(want));

  it.each([
    ['"foo"', '[=foo]'],
    ['"example.com/finalizer"', '[=example.com/finalizer]'],
    ['"kubernetes.io/pvc-protection"', '[=kubernetes.io/pvc-protection]'],
    ['"a b"', '[="a b"]'],
    ['42', '[=42]'],
    ['"unterminated', '[="unterminated]'],
  ])('v:%s → %s', (json, want) => expect(formatSetSegment(json)).toBe(want));

  it.each<[string, string, string | undefined]>([
    ['', 'f:spec', 'spec'],
    ['spec', 'f:replicas', 'spec.replicas'],
    ['', 'f:a.b', '["a.b"]'],
    ['metadata.labels', 'f:app.kubernetes.io/name', 'metadata.labels["app.kubernetes.io/name"]'],
    ['spec.containers', 'k:{"name":"render"}', 'spec.containers[name=render]'],
    ['spec.containers[name=render]', 'f:image', 'spec.containers[name=render].image'],
    ['metadata.finalizers', 'v:"x"', 'metadata.finalizers[=x]'],
    ['spec.list', 'i:3', 'spec.list[3]'],
    ['spec', 'weird', 'spec.weird'],
    ['spec', 'x:y', 'spec["x:y"]'],
    ['spec', '.', undefined],
  ])('childPath(%j, %j) → %j', (parent, key, want) => expect(childPath(parent, key)).toBe(want));
});

// ---------------------------------------------------------------- the one path format

describe('joining and splitting paths', () => {
  it.each<[string, string, string]>([
    ['', 'spec', 'spec'],
    ['spec', 'replicas', 'spec.replicas'],
    // a bracket takes no dot before it (the diff once wrote `data.["api-key"]`)
    ['data', '["api-key"]', 'data["api-key"]'],
    ['', '["a.b"]', '["a.b"]'],
    ['metadata.labels', '["app.kubernetes.io/name"]', 'metadata.labels["app.kubernetes.io/name"]'],
    ['spec.ports', '[port=80,protocol=TCP]', 'spec.ports[port=80,protocol=TCP]'],
    ['metadata.finalizers', '[=x]', 'metadata.finalizers[=x]'],
  ])('joinFieldPath(%j, %j) → %j', (parent, segment, want) => expect(joinFieldPath(parent, segment)).toBe(want));

  it.each<[string, string, string]>([
    ['data', 'api-key', 'data["api-key"]'],
    ['data', 'tls.crt', 'data["tls.crt"]'],
    [
      'metadata.annotations',
      'service.beta.kubernetes.io/foo',
      'metadata.annotations["service.beta.kubernetes.io/foo"]',
    ],
    ['', 'spec', 'spec'],
  ])('fieldPath(%j, %j) → %j', (parent, name, want) => expect(fieldPath(parent, name)).toBe(want));

  it.each<[string, string[]]>([
    ['spec.replicas', ['spec', 'replicas']],
    ['data["api-key"]', ['data', '["api-key"]']],
    ['metadata.annotations["a.b/c[d]"]', ['metadata', 'annotations', '["a.b/c[d]"]']],
    ['x["q\\"].y"]', ['x', '["q\\"].y"]']],
    [
      'spec.ports[containerPort=8080,protocol=TCP].name',
      ['spec', 'ports', '[containerPort=8080,protocol=TCP]', 'name'],
    ],
    ['env[name="a]b.c"].value', ['env', '[name="a]b.c"]', 'value']],
    ['env[name=a"b].value', ['env', '[name=a"b]', 'value']],
    ['metadata.finalizers[=example.com/x]', ['metadata', 'finalizers', '[=example.com/x]']],
    ['list[3].a', ['list', '[3]', 'a']],
    ['', []],
  ])('splitFieldPath(%j) → %j', (path, want) => expect(splitFieldPath(path)).toEqual(want));

  it('splits every path ownersByPath writes back into the segments it was joined from', () => {
    const objects = [sandbox.deployment, sandbox.service, handwritten.secret.live, handwritten.configMap.live];
    for (const obj of [...objects, handwritten.service.live, deployment, service]) {
      for (const path of Object.keys(ownersByPath(obj)))
        expect(splitFieldPath(path).reduce(joinFieldPath, ''), path).toBe(path);
    }
  });

  it.each<[ReadonlyArray<readonly [string, unknown]>, string | undefined]>([
    [[['name', 'render']], '[name=render]'],
    [
      [
        ['containerPort', 8080],
        ['protocol', 'TCP'],
      ],
      '[containerPort=8080,protocol=TCP]',
    ],
    [[['name', 'a,b']], '[name="a,b"]'],
    [[], undefined],
  ])('formatKeyFieldsSegment(%j) → %j', (keys, want) => expect(formatKeyFieldsSegment(keys)).toBe(want));

  it.each<[string, string[] | undefined]>([
    ['[name=render]', ['name']],
    ['[containerPort=8080,protocol=TCP]', ['containerPort', 'protocol']],
    ['[name="a=b,c"]', ['name']],
    ['["quoted key"=1]', ['quoted key']],
    ['["api-key"]', undefined],
    ['[=x]', undefined],
    ['[3]', undefined],
    ['[not json]', undefined],
    ['spec', undefined],
  ])('keyedSegmentFields(%j) → %j', (segment, want) => expect(keyedSegmentFields(segment)).toEqual(want));

  it.each<[string, string | undefined]>([
    ['replicas', 'replicas'],
    ['["api-key"]', 'api-key'],
    ['["q\\"]"]', 'q"]'],
    ['["quoted key"=1]', undefined],
    ['[name=render]', undefined],
    ['[=x]', undefined],
    ['[3]', undefined],
    ['', undefined],
  ])('fieldSegmentName(%j) → %j', (segment, want) => expect(fieldSegmentName(segment)).toBe(want));

  it.each<[string, string | undefined]>([
    ['spec.replicas', '/spec/replicas'],
    ['metadata.annotations["service.beta.kubernetes.io/foo"]', '/metadata/annotations/service.beta.kubernetes.io~1foo'],
    ['data["a~b"]', '/data/a~0b'],
    ['spec.template.spec.containers[name=render].image', undefined],
    ['metadata.finalizers[=x]', undefined],
  ])('fieldPathToPointer(%j) → %j', (path, want) => expect(fieldPathToPointer(path)).toBe(want));
});

// ---------------------------------------------------------------- decoding

describe('ownersByPath: trie shapes', () => {
  it.each<[string, unknown, string[]]>([
    [
      'keyed list: containers by name',
      {
        'f:spec': {
          'f:template': {
            'f:spec': { 'f:containers': { 'k:{"name":"render"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
          },
        },
      },
      [
        'spec.template.spec.containers[name=render]',
        'spec.template.spec.containers[name=render].image',
        'spec.template.spec.containers[name=render].name',
      ],
    ],
    [
      'keyed list: container ports by containerPort+protocol',
      {
        'f:spec': {
          'f:containers': {
            'k:{"name":"render"}': {
              'f:ports': {
                'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {} },
              },
            },
          },
        },
      },
      [
        'spec.containers[name=render].ports[containerPort=8080,protocol=TCP]',
        'spec.containers[name=render].ports[containerPort=8080,protocol=TCP].containerPort',
        'spec.containers[name=render].ports[containerPort=8080,protocol=TCP].name',
      ],
    ],
    [
      'keyed list: Service ports by port+protocol',
      { 'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { 'f:targetPort': {} } } } },
      ['spec.ports[port=80,protocol=TCP].targetPort'],
    ],
    [
      'nested keyed lists: env var inside a container',
      {
        'f:spec': {
          'f:template': {
            'f:spec': {
              'f:containers': {
                'k:{"name":"render"}': {
                  'f:env': { 'k:{"name":"RENDER_QUALITY"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                },
              },
            },
          },
        },
      },
      [
        'spec.template.spec.containers[name=render].env[name=RENDER_QUALITY]',
        'spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].name',
        'spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value',
      ],
    ],
    [
      'set: finalizers',
      { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"example.com/finalizer"': {}, 'v:"foo"': {} } } },
      ['metadata.finalizers', 'metadata.finalizers[=example.com/finalizer]', 'metadata.finalizers[=foo]'],
    ],
    [
      '`.` makes a map owned as a whole alongside its keys',
      { 'f:metadata': { 'f:annotations': { '.': {}, 'f:team': {} } } },
      ['metadata.annotations', 'metadata.annotations.team'],
    ],
    [
      'a node holding only `.` is a path (nothing else inside)',
      { 'f:spec': { 'f:strategy': { '.': {} } } },
      ['spec.strategy'],
    ],
    [
      'labels and annotations with dots and slashes are bracketed',
      {
        'f:metadata': {
          'f:labels': { 'f:app.kubernetes.io/name': {}, 'f:tier': {} },
          'f:annotations': { 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
        },
      },
      [
        'metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]',
        'metadata.labels["app.kubernetes.io/name"]',
        'metadata.labels.tier',
      ],
    ],
    ['atomic fields are leaves', { 'f:spec': { 'f:selector': {}, 'f:type': {} } }, ['spec.selector', 'spec.type']],
    ['intermediate nodes without `.` are not paths', { 'f:a': { 'f:b': { 'f:c': {} } } }, ['a.b.c']],
    ['empty trie owns nothing', {}, []],
    ['root `.` is not a path', { '.': {}, 'f:x': {} }, ['x']],
    [
      'key values with separators are JSON-quoted',
      { 'f:spec': { 'f:items': { 'k:{"name":"a=b c"}': { 'f:v': {} } } } },
      ['spec.items[name="a=b c"].v'],
    ],
    [
      'invalid k:/v: JSON keeps the raw text in brackets',
      { 'f:spec': { 'f:items': { 'k:{"name":': { 'f:v': {} }, 'v:oops': {} } } },
      ['spec.items[=oops]', 'spec.items[{"name":].v'],
    ],
  ])('%s', (_name, fieldsV1, want) => expect(pathsOf(fieldsV1)).toEqual([...want].sort()));

  it('lists a node before its children (pre-order)', () => {
    const paths = Object.keys(
      ownersByPath(
        withManagedFields([
          entry('m', 'Apply', {
            'f:spec': { 'f:c': { 'k:{"name":"a"}': { '.': {}, 'f:x': {} }, 'k:{"name":"b"}': { '.': {} } } },
          }),
        ]),
      ),
    );
    expect(paths).toEqual(['spec.c[name=a]', 'spec.c[name=a].x', 'spec.c[name=b]']);
  });

  it('keeps `__proto__` and other prototype names as plain data paths', () => {
    const fieldsV1 = JSON.parse('{"f:__proto__":{},"f:constructor":{},"f:toString":{}}') as unknown;
    const got = ownersByPath(withManagedFields([entry('m', 'Apply', fieldsV1)]));
    expect(Object.keys(got).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Object.hasOwn(got, '__proto__')).toBe(true);
  });
});

describe('ownersByPath: a Deployment with several managers', () => {
  const owners = ownersByPath(deployment);

  it.each<[string, FieldOwner[]]>([
    ['metadata.labels["app.kubernetes.io/name"]', [KUSTOMIZE, EDIT]],
    ['metadata.labels["kustomize.toolkit.fluxcd.io/name"]', [KUSTOMIZE]],
    ['metadata.annotations', [EDIT, KCM_STATUS]],
    ['metadata.annotations["ops.example.com/owner"]', [EDIT]],
    ['metadata.annotations["deployment.kubernetes.io/revision"]', [KCM_STATUS]],
    ['spec.replicas', [KUSTOMIZE, KCM_SCALE]],
    ['spec.selector', [KUSTOMIZE]],
    ['spec.template.metadata.labels["app.kubernetes.io/name"]', [KUSTOMIZE]],
    ['spec.template.spec.containers[name=render]', [KUSTOMIZE]],
    ['spec.template.spec.containers[name=render].image', [KUSTOMIZE]],
    ['spec.template.spec.containers[name=render].env[name=RENDER_QUALITY]', [KUSTOMIZE]],
    ['spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value', [KUSTOMIZE]],
    ['spec.template.spec.containers[name=render].env[name=RENDER_DEBUG].value', [EDIT]],
    ['spec.template.spec.containers[name=render].resources.limits', [EDIT]],
    ['spec.template.spec.containers[name=render].resources.limits.memory', [EDIT]],
    ['spec.template.spec.containers[name=render].ports[containerPort=8080,protocol=TCP]', [KUSTOMIZE]],
    ['spec.template.spec.containers[name=render].ports[containerPort=8080,protocol=TCP].name', [KUSTOMIZE]],
    ['status.replicas', [KCM_STATUS]],
    ['status.conditions', [KCM_STATUS]],
    ['status.conditions[type=Available]', [KCM_STATUS]],
    ['status.conditions[type=Progressing].reason', [KCM_STATUS]],
  ])('%s', (path, want) => expect(owners[path]).toEqual(want));

  it.each([
    'spec',
    'spec.template',
    'spec.template.spec.containers',
    'spec.template.spec.containers[name=render].env',
    'spec.template.spec.containers[name=render].resources',
    'metadata.labels',
    'status',
  ])('does not list the intermediate node %s', (path) => expect(owners).not.toHaveProperty([path]));

  it('has the expected number of paths', () => {
    // per entry: kustomize 15, kubectl-edit 8, scale 1, status 22; shared: one label, spec.replicas, metadata.annotations
    expect(Object.keys(owners)).toHaveLength(15 + (8 - 1) + (1 - 1) + (22 - 1));
  });

  it('copies time and subresource only when present', () => {
    const [apply] = owners['spec.selector']!;
    expect(apply).toEqual({ manager: 'kustomize-controller', operation: 'Apply', time: T0 });
    expect(apply).not.toHaveProperty('subresource');
    const noTime = ownersByPath(
      withManagedFields([{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } }]),
    );
    expect(noTime.a).toEqual([{ manager: 'm', operation: 'Update' }]);
    expect(noTime.a![0]).not.toHaveProperty('time');
  });

  it('returns fresh owner objects (mutating one does not affect another path)', () => {
    const fresh = ownersByPath(deployment);
    fresh['spec.selector']![0]!.manager = 'changed';
    expect(fresh['spec.template.spec.containers[name=render].image']![0]!.manager).toBe('kustomize-controller');
    expect(ownersByPath(deployment)['spec.selector']![0]!.manager).toBe('kustomize-controller');
  });

  it('decodes the Service fixture', () => {
    expect(Object.keys(ownersByPath(service)).sort()).toEqual(
      [
        'metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]',
        'metadata.finalizers[=example.com/finalizer]',
        'metadata.labels["app.kubernetes.io/name"]',
        'spec.ports[port=80,protocol=TCP]',
        'spec.ports[port=80,protocol=TCP].name',
        'spec.ports[port=80,protocol=TCP].port',
        'spec.ports[port=80,protocol=TCP].protocol',
        'spec.ports[port=80,protocol=TCP].targetPort',
        'spec.ports[port=53,protocol=UDP]',
        'spec.ports[port=53,protocol=UDP].port',
        'spec.ports[port=53,protocol=UDP].protocol',
        'spec.ports[port=53,protocol=UDP].targetPort',
        'spec.selector',
        'spec.type',
      ].sort(),
    );
  });

  it('survives a JSON round trip (the wire format)', () => {
    expect(ownersByPath(JSON.parse(JSON.stringify(deployment)))).toEqual(ownersByPath(deployment));
  });
});

describe('ownersByPath: multiple entries on one path', () => {
  it('lists every owner in managedFields order, including one manager on several subresources', () => {
    const got = ownersByPath(
      withManagedFields([
        entry('kube-controller-manager', 'Update', { 'f:spec': { 'f:replicas': {} } }, { subresource: 'scale' }),
        entry('kustomize-controller', 'Apply', { 'f:spec': { 'f:replicas': {} } }),
        entry('kube-controller-manager', 'Update', { 'f:spec': { 'f:replicas': {} } }),
      ]),
    );
    expect(got['spec.replicas']!.map((o) => [o.manager, o.subresource])).toEqual([
      ['kube-controller-manager', 'scale'],
      ['kustomize-controller', undefined],
      ['kube-controller-manager', undefined],
    ]);
  });

  it('counts one entry once when two keys spell the same path', () => {
    const got = ownersByPath(
      withManagedFields([
        entry('m', 'Apply', { 'f:c': { 'k:{"name":"a"}': { 'f:x': {} }, 'k:{ "name": "a" }': { 'f:x': {} } } }),
      ]),
    );
    expect(got).toEqual({ 'c[name=a].x': [{ manager: 'm', operation: 'Apply', time: T0 }] });
  });
});

describe('ownersByPath / managersOf: malformed input', () => {
  const good = entry('good', 'Apply', { 'f:a': {} });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'metadata'],
    ['a number', 42],
    ['an array', [good]],
    ['no metadata', { kind: 'Deployment' }],
    ['metadata not an object', { metadata: 'x' }],
    ['managedFields missing', { metadata: { name: 'x' } }],
    ['managedFields an object', { metadata: { managedFields: { 0: good } } }],
    ['managedFields a string', { metadata: { managedFields: 'FieldsV1' } }],
  ])('%s → nothing', (_name, obj) => {
    expect(ownersByPath(obj)).toEqual({});
    expect(managersOf(obj)).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['null entry', null],
    ['string entry', 'kustomize-controller'],
    ['missing manager', { operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:b': {} } }],
    ['empty manager', entry('', 'Apply', { 'f:b': {} })],
    ['numeric manager', entry(7 as unknown as string, 'Apply', { 'f:b': {} })],
    ['unknown operation', entry('x', 'Patch', { 'f:b': {} })],
    ['lower-case operation', entry('x', 'apply', { 'f:b': {} })],
    ['missing operation', { manager: 'x', fieldsType: 'FieldsV1', fieldsV1: { 'f:b': {} } }],
    ['other fieldsType', entry('x', 'Apply', { 'f:b': {} }, { fieldsType: 'FieldsV2' })],
    ['missing fieldsType', { manager: 'x', operation: 'Apply', fieldsV1: { 'f:b': {} } }],
    ['fieldsV1 a string', entry('x', 'Apply', '{"f:b":{}}')],
    ['fieldsV1 an array', entry('x', 'Apply', [{ 'f:b': {} }])],
    ['fieldsV1 null', entry('x', 'Apply', null)],
  ])('skips a bad entry (%s) and keeps the good one', (_name, bad) => {
    const obj = withManagedFields([bad, good]);
    expect(ownersByPath(obj)).toEqual({ a: [{ manager: 'good', operation: 'Apply', time: T0 }] });
    expect(managersOf(obj)).toEqual(['good']);
  });

  it('ignores non-object garbage inside fieldsV1 and non-string time/subresource', () => {
    const obj = withManagedFields([
      entry(
        'm',
        'Update',
        { 'f:spec': { 'f:n': 5, 'f:s': 'x', 'f:z': null, 'f:arr': [{}], 'f:ok': {}, 'f:dot': { '.': true } } },
        { time: 12345, subresource: { name: 'status' } },
      ),
    ]);
    expect(ownersByPath(obj)).toEqual({
      'spec.ok': [{ manager: 'm', operation: 'Update' }],
      'spec.dot': [{ manager: 'm', operation: 'Update' }],
    });
  });

  it('does not loop on a cyclic hand-built trie, but does follow a shared (non-cyclic) node', () => {
    const leaf = {};
    const shared = { 'f:x': leaf };
    const cyclic: O = { 'f:a': shared, 'f:b': shared };
    cyclic['f:self'] = cyclic;
    const got = ownersByPath(withManagedFields([entry('m', 'Apply', cyclic)]));
    expect(Object.keys(got).sort()).toEqual(['a.x', 'b.x']);
  });

  it('does not overflow the stack on a very deep trie', () => {
    let trie: O = { 'f:leaf': {} };
    for (let i = 0; i < 50_000; i++) trie = { 'f:n': trie };
    const got = ownersByPath(withManagedFields([entry('m', 'Apply', trie)]));
    expect(Object.keys(got)).toHaveLength(1);
  });

  it('does not throw when metadata itself is hostile', () => {
    const obj = {
      get metadata(): unknown {
        throw new Error('boom');
      },
    };
    expect(ownersByPath(obj)).toEqual({});
    expect(managersOf(obj)).toEqual([]);
  });

  it('does not throw on hostile getters', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
        ownKeys() {
          throw new Error('boom');
        },
      },
    );
    const obj = withManagedFields([hostile, entry('m', 'Apply', hostile), good]);
    expect(ownersByPath(obj)).toEqual({ a: [{ manager: 'good', operation: 'Apply', time: T0 }] });
    // the second entry is well-formed at the top level; only its trie is unreadable
    expect(managersOf(obj)).toEqual(['m', 'good']);
  });
});

describe('managersOf', () => {
  it('lists unique managers in order of first appearance', () => {
    expect(managersOf(deployment)).toEqual(['kustomize-controller', 'kubectl-edit', 'kube-controller-manager']);
  });

  it('includes a valid manager whose trie is empty', () => {
    expect(managersOf(withManagedFields([entry('before-first-apply', 'Update', {}), entry('b', 'Apply', {})]))).toEqual(
      ['before-first-apply', 'b'],
    );
  });
});

describe('scale', () => {
  it('decodes 10,000 managed fields', () => {
    const labels: O = {};
    const containers: O = {};
    for (let i = 0; i < 5_000; i++) labels[`f:example.com/label-${i}`] = {};
    // 1,000 containers × (item `.` + 3 leaves + env item `.`) = 5,000 paths
    for (let i = 0; i < 1_000; i++) {
      containers[`k:{"name":"c${i}"}`] = {
        '.': {},
        'f:image': {},
        'f:name': {},
        'f:env': { [`k:{"name":"E${i}"}`]: { '.': {} } },
        'f:imagePullPolicy': {},
      };
    }
    const obj = withManagedFields([
      entry('kustomize-controller', 'Apply', {
        'f:metadata': { 'f:labels': labels },
        'f:spec': { 'f:template': { 'f:spec': { 'f:containers': containers } } },
      }),
    ]);
    const got = ownersByPath(obj);
    expect(Object.keys(got)).toHaveLength(10_000);
    expect(got['metadata.labels["example.com/label-4999"]']).toHaveLength(1);
    expect(got['spec.template.spec.containers[name=c999].env[name=E999]']).toHaveLength(1);
  });
});
