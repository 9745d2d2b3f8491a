// fieldDiff on keys that are not identifiers (data keys with a dash or a dot, label and annotation keys with a
// slash): the diff's paths must be the ones ownersByPath writes, so every change names its owners and gets its
// class from them, and Argo CD jsonPointers ignore rules for such keys match. Fixtures: hand-written in the shape
// kube-apiserver returns them (see the file's `source`), one object per key shape, one key per change class.
import { describe, expect, it } from 'vitest';
import fixture from './fixtures/field-paths-handwritten.json' with { type: 'json' };
import { fieldDiff, type ChangeClass, type FieldChange, type IgnoreRule } from './field-diff.ts';
import { ownersByPath } from './managed-fields.ts';

const FLUX = ['kustomize-controller'];
type Row = [path: string, cls: ChangeClass, managers: string[]];

const diffOf = (s: { git: unknown; dryRun: unknown; live: unknown }, ignore?: IgnoreRule): FieldChange[] =>
  fieldDiff({
    desired: s.git,
    predicted: s.dryRun,
    live: s.live,
    controllerManagers: FLUX,
    mode: 'server-dry-run',
    ...(ignore ? { ignore } : {}),
  });
const rows = (changes: FieldChange[]): Row[] =>
  changes.map((c) => [c.path, c.class, [...new Set(c.owners.map((o) => o.manager))]]);

describe.each<[string, { git: unknown; dryRun: unknown; live: unknown }, string, Row[], Row]>([
  [
    'dash keys (Secret data)',
    fixture.secret,
    '/data/tls-key',
    [
      ['data["api-key"]', 'drift', ['kubectl-client-side-apply']],
      ['data["ca-bundle"]', 'defaulted', ['kustomize-controller']],
      ['data["db-password"]', 'pending', ['kustomize-controller']],
      ['data["session-key"]', 'conflict', ['secret-rotator']],
      [
        'metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]',
        'drift',
        ['kubectl-client-side-apply'],
      ],
    ],
    ['data["tls-key"]', 'pending', ['kustomize-controller']],
  ],
  [
    'dot keys (ConfigMap data)',
    fixture.configMap,
    '/data/cache.ttl',
    [
      ['data["app.properties"]', 'drift', ['kubectl-edit']],
      ['data["ca.crt"]', 'defaulted', ['kustomize-controller']],
      ['data["feature.flags"]', 'conflict', ['flagd-operator']],
      ['data["log.level"]', 'pending', ['kustomize-controller']],
    ],
    ['data["cache.ttl"]', 'pending', ['kustomize-controller']],
  ],
  [
    'slash keys (Service labels and annotations)',
    fixture.service,
    '/metadata/annotations/service.beta.kubernetes.io~1foo',
    [
      ['metadata.annotations["cloud.google.com/neg"]', 'defaulted', ['kustomize-controller']],
      [
        'metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-type"]',
        'conflict',
        ['aws-load-balancer-controller'],
      ],
      ['metadata.labels["app.kubernetes.io/part-of"]', 'pending', ['kustomize-controller']],
      ['metadata.labels["app.kubernetes.io/version"]', 'drift', ['kubectl-edit']],
    ],
    ['metadata.annotations["service.beta.kubernetes.io/foo"]', 'conflict', ['aws-load-balancer-controller']],
  ],
])('fieldDiff on %s', (_shape, scenario, pointer, want, ignorable) => {
  // the Service's spec defaults (clusterIP, sessionAffinity, ...) are keyed by identifiers: not this test's subject
  const keyed = (changes: FieldChange[]) =>
    rows(changes).filter(([p]) => p.startsWith('data') || p.startsWith('metadata'));

  it('classifies each key by its real owner (drift, pending, conflict, defaulted) under the documented path', () => {
    expect(keyed(diffOf(scenario))).toEqual([...want, ignorable].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  });

  it(`ignores the key named by the Argo CD jsonPointer ${pointer}`, () => {
    const changes = keyed(diffOf(scenario, { jsonPointers: [pointer] }));
    expect(changes).toContainEqual([ignorable[0], 'ignored', ignorable[2]]);
    expect(changes.filter(([, cls]) => cls === 'ignored')).toHaveLength(1);
  });

  it('names every changed key with a path ownersByPath wrote (its direct owners, no ancestor)', () => {
    const owned = ownersByPath(scenario.live);
    const changes = diffOf(scenario).filter((c) => c.path.startsWith('data') || c.path.startsWith('metadata'));
    expect(changes.length).toBe(want.length + 1);
    for (const c of changes) expect(owned[c.path], c.path).toEqual(c.owners);
  });
});

describe('fieldDiff on slash keys with an Argo CD managedFieldsManagers rule', () => {
  it('ignores the fields of the named manager only', () => {
    const changes = rows(diffOf(fixture.service, { managedFieldsManagers: ['aws-load-balancer-controller'] }));
    expect(changes.filter(([, cls]) => cls === 'ignored').map(([p]) => p)).toEqual([
      'metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-type"]',
      'metadata.annotations["service.beta.kubernetes.io/foo"]',
    ]);
    expect(changes).toContainEqual(['metadata.labels["app.kubernetes.io/version"]', 'drift', ['kubectl-edit']]);
  });
});
