import { describe, expect, it } from 'vitest';
import { driftEnded, driftWrites } from './drift.ts';

const FLUX = ['kustomize-controller'];
type Obj = Record<string, unknown>;

// managedFields as kube-apiserver writes them (FieldsV1), for a Deployment Flux applies
const fluxApply = (time: string, withReplicas = true) => ({
  manager: 'kustomize-controller',
  operation: 'Apply',
  apiVersion: 'apps/v1',
  time,
  fieldsType: 'FieldsV1',
  fieldsV1: {
    'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {} } },
    'f:spec': {
      ...(withReplicas ? { 'f:replicas': {} } : {}),
      'f:template': {
        'f:spec': { 'f:containers': { 'k:{"name":"render"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
      },
    },
  },
});
const kcm = (time: string) => ({
  manager: 'kube-controller-manager',
  operation: 'Update',
  apiVersion: 'apps/v1',
  time,
  subresource: 'status',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:status': { 'f:replicas': {}, 'f:readyReplicas': {} } },
});
const scaled = (manager: string, time: string, subresource?: string) => ({
  manager,
  operation: 'Update',
  apiVersion: 'apps/v1',
  time,
  ...(subresource ? { subresource } : {}),
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:spec': { 'f:replicas': {} } },
});
const deploy = (replicas: number, managedFields: unknown[], image = 'render:1'): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'render-worker', namespace: 'dev', labels: { 'app.kubernetes.io/name': 'render' }, managedFields },
  spec: { replicas, template: { spec: { containers: [{ name: 'render', image }] } } },
  status: { replicas },
});

const T0 = '2026-12-01T10:00:00Z';
const T1 = '2026-12-01T10:05:00Z';
const T2 = '2026-12-01T10:05:30Z';

describe('driftWrites', () => {
  const before = deploy(1, [fluxApply(T0), kcm(T0)]);

  it('a person scaling a Deployment whose replicas Git declares: person drift with the values', () => {
    const after = deploy(3, [fluxApply(T0, false), kcm(T0), scaled('kubectl-scale', T1, 'scale')]);
    expect(driftWrites(before, after, FLUX)).toEqual([
      {
        kind: 'person',
        manager: 'kubectl-scale',
        operation: 'Update',
        subresource: 'scale',
        time: T1,
        fields: [{ path: 'spec.replicas', from: 1, to: 3 }],
      },
    ]);
  });

  it('kubectl edit of a keyed list item field (container image)', () => {
    const edit = {
      manager: 'kubectl-edit',
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: T1,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"render"}': { 'f:image': {} } } } } },
      },
    };
    const after = deploy(1, [fluxApply(T0), kcm(T0), edit], 'render:2');
    const w = driftWrites(deploy(1, [fluxApply(T0), kcm(T0)]), after, FLUX);
    expect(w.map((x) => [x.kind, x.manager, x.fields])).toEqual([
      [
        'person',
        'kubectl-edit',
        [{ path: 'spec.template.spec.containers[name=render].image', from: 'render:1', to: 'render:2' }],
      ],
    ]);
  });

  it('another controller (HPA through /scale) on replicas Git declares: a conflict, not a person', () => {
    const after = deploy(4, [fluxApply(T0, false), kcm(T0), scaled('horizontal-pod-autoscaler', T1, 'scale')]);
    expect(driftWrites(before, after, FLUX).map((w) => [w.kind, w.manager])).toEqual([
      ['conflict', 'horizontal-pod-autoscaler'],
    ]);
  });

  it('no drift: HPA scaling replicas Git does not declare', () => {
    const noReplicas = deploy(1, [fluxApply(T0, false), kcm(T0)]);
    const after = deploy(4, [fluxApply(T0, false), kcm(T0), scaled('horizontal-pod-autoscaler', T1, 'scale')]);
    expect(driftWrites(noReplicas, after, FLUX)).toEqual([]);
  });

  it("no drift: the controller's own apply, status writes, an unchanged value, a first sight", () => {
    expect(driftWrites(before, deploy(1, [fluxApply(T1), kcm(T0)]), FLUX)).toEqual([]);
    expect(driftWrites(before, deploy(1, [fluxApply(T0), kcm(T1)]), FLUX)).toEqual([]);
    // kubectl apply of the same value: shared ownership, nothing changed
    expect(
      driftWrites(before, deploy(1, [fluxApply(T0), kcm(T0), scaled('kubectl-client-side-apply', T1)]), FLUX),
    ).toEqual([]);
    expect(driftWrites(undefined, deploy(3, [fluxApply(T0, false), scaled('kubectl-edit', T1)]), FLUX)).toEqual([]);
  });

  it('a second write by the same manager (refreshed time) is seen again', () => {
    const first = deploy(3, [fluxApply(T0, false), scaled('kubectl-scale', T1, 'scale')]);
    const second = deploy(5, [fluxApply(T0, false), scaled('kubectl-scale', T2, 'scale')]);
    // a person's tool changing a field is drift whether or not the console still knows Git declares it
    expect(driftWrites(first, second, FLUX).map((w) => [w.kind, w.fields])).toEqual([
      ['person', [{ path: 'spec.replicas', from: 3, to: 5 }]],
    ]);
    // with the open episode's fields known to be Git's, another controller's write is seen too
    const hpa = deploy(6, [fluxApply(T0, false), scaled('kube-controller-manager', T2, 'scale')]);
    expect(driftWrites(first, hpa, FLUX)).toEqual([]);
    expect(driftWrites(first, hpa, FLUX, ['spec.replicas']).map((w) => [w.kind, w.manager, w.fields])).toEqual([
      ['conflict', 'kube-controller-manager', [{ path: 'spec.replicas', from: 3, to: 6 }]],
    ]);
  });

  it('writes within the same second (managedFields unchanged) are seen through an open episode', () => {
    const first = deploy(3, [fluxApply(T0, false), scaled('kubectl-scale', T1, 'scale')]);
    const again = deploy(4, [fluxApply(T0, false), scaled('kubectl-scale', T1, 'scale')]);
    expect(driftWrites(first, again, FLUX)).toEqual([]);
    expect(driftWrites(first, again, FLUX, ['spec.replicas']).map((w) => w.fields)).toEqual([
      [{ path: 'spec.replicas', from: 3, to: 4 }],
    ]);
  });

  it('a field added by hand is drift (as the diff says), by another controller it is not', () => {
    const svc = (annotations: Record<string, string>, mf: unknown[]): Obj => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'tts-gateway', namespace: 'dev', labels: { env: 'dev' }, annotations, managedFields: mf },
      spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    const flux = {
      manager: 'kustomize-controller',
      operation: 'Apply',
      time: T0,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:env': {} } } },
    };
    const annotate = (manager: string, key: string) => ({
      manager,
      operation: 'Update',
      time: T1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${key}`]: {} } } },
    });
    const before = svc({}, [flux]);
    const lb = svc({ 'lb-id': 'x' }, [flux, annotate('cloud-lb-controller', 'lb-id')]);
    expect(driftWrites(before, lb, FLUX)).toEqual([]);
    const hand = svc({ note: 'hi' }, [flux, annotate('kubectl-annotate', 'note')]);
    expect(driftWrites(before, hand, FLUX).map((w) => [w.kind, w.manager, w.fields])).toEqual([
      ['person', 'kubectl-annotate', [{ path: 'metadata.annotations.note', to: 'hi' }]],
    ]);
    // another controller taking a label Git declares: a conflict
    const label = {
      ...svc({}, [
        { ...flux, fieldsV1: { 'f:metadata': {} } },
        {
          manager: 'cloud-lb-controller',
          operation: 'Update',
          time: T1,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { 'f:env': {} } } },
        },
      ]),
    };
    (label.metadata as { labels: Record<string, string> }).labels = { env: 'lb' };
    expect(driftWrites(before, label, FLUX).map((w) => [w.kind, w.manager, w.fields])).toEqual([
      ['conflict', 'cloud-lb-controller', [{ path: 'metadata.labels.env', from: 'dev', to: 'lb' }]],
    ]);
  });

  it("an env item added by kubectl edit: its leaves, not the item and its key (the diff's paths)", () => {
    const edit = {
      manager: 'kubectl-edit',
      operation: 'Update',
      time: T1,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:spec': {
          'f:template': {
            'f:spec': {
              'f:containers': {
                'k:{"name":"render"}': {
                  'f:env': { 'k:{"name":"DEBUG_TRACE"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                },
              },
            },
          },
        },
      },
    };
    const after = deploy(1, [fluxApply(T0), kcm(T0), edit]);
    const spec = after.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } };
    spec.template.spec.containers[0]!.env = [{ name: 'DEBUG_TRACE', value: '1' }];
    expect(driftWrites(before, after, FLUX).map((w) => w.fields)).toEqual([
      [{ path: 'spec.template.spec.containers[name=render].env[name=DEBUG_TRACE].value', to: '1' }],
    ]);
  });
});

describe('driftEnded', () => {
  const episode = {
    managers: ['kubectl-scale'],
    fields: [{ path: 'spec.replicas', from: 1, to: 3 }],
    lastWriteAt: T1,
  };

  it('open while the drifting manager still owns the field', () => {
    expect(driftEnded(deploy(3, [fluxApply(T0, false), scaled('kubectl-scale', T1, 'scale')]), episode, FLUX)).toBe(
      undefined,
    );
  });
  it('reverted when the controller applies Git again', () => {
    expect(driftEnded(deploy(1, [fluxApply(T2)]), episode, FLUX)).toBe('reverted');
  });
  it('adopted when Git changed to the live value (the controller applied it after the write)', () => {
    expect(driftEnded(deploy(3, [fluxApply(T2)]), episode, FLUX)).toBe('adopted');
    // applied with the same value: the controller shares the field with the person's tool
    expect(driftEnded(deploy(3, [fluxApply(T2), scaled('kubectl-scale', T1, 'scale')]), episode, FLUX)).toBe('adopted');
  });
  it("open while Flux has handed kubectl's fields to itself but not applied Git yet", () => {
    // Flux's cleanup merges a kubectl-* entry into its own Apply entry (keeping that entry's older time)
    expect(driftEnded(deploy(3, [fluxApply(T0)]), episode, FLUX)).toBe(undefined);
    // …and its apply that follows puts Git's value back
    expect(driftEnded(deploy(1, [fluxApply(T2)]), episode, FLUX)).toBe('reverted');
  });
  it('a field added by hand is reverted when it is gone', () => {
    const added = {
      managers: ['kubectl-edit'],
      fields: [{ path: 'metadata.annotations.note', to: 'x' }],
      lastWriteAt: T1,
    };
    expect(driftEnded(deploy(1, [fluxApply(T2)]), added, FLUX)).toBe('reverted');
  });
});
