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
    // replicas was Git's before the first write: the second write still changes a field Git declared,
    // but the console only knows that from the first version; between the two, Git no longer owns it
    expect(driftWrites(first, second, FLUX)).toEqual([]);
    // with the open episode's fields known to be Git's, the second write is seen (and coalesced by the caller)
    expect(driftWrites(first, second, FLUX, ['spec.replicas']).map((w) => w.fields)).toEqual([
      [{ path: 'spec.replicas', from: 3, to: 5 }],
    ]);
  });
});

describe('driftEnded', () => {
  const episode = { managers: ['kubectl-scale'], fields: [{ path: 'spec.replicas', from: 1, to: 3 }] };

  it('open while the drifting manager still owns the field', () => {
    expect(driftEnded(deploy(3, [fluxApply(T0, false), scaled('kubectl-scale', T1, 'scale')]), episode, FLUX)).toBe(
      undefined,
    );
  });
  it('reverted when the controller applies Git again', () => {
    expect(driftEnded(deploy(1, [fluxApply(T2)]), episode, FLUX)).toBe('reverted');
  });
  it('adopted when Git changed to the live value', () => {
    expect(driftEnded(deploy(3, [fluxApply(T2)]), episode, FLUX)).toBe('adopted');
  });
});
