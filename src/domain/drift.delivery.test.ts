// Drift as the informers see it, next to Argo Rollouts and Flagger: their own writes are no drift write at all
// (no `drift.detected`), the same field by a person's tool is, and whatever else they take is a conflict.
import { describe, expect, it } from 'vitest';
import { driftWrites } from './drift.ts';
import {
  deployment,
  deploymentApply,
  imageUpdate,
  replicasUpdate,
  rolloutsSwitch,
  selectorUpdate,
  service,
  serviceApply,
  T_APPLY,
  T_WRITE,
} from './fixtures/delivery-objects.ts';

const FLUX = ['kustomize-controller'];
const summary = (ws: ReturnType<typeof driftWrites>) => ws.map((w) => [w.kind, w.manager, w.fields]);

describe('driftWrites next to Flagger', () => {
  const before = deployment(2, [deploymentApply()]);

  it('Flagger scaling its target to 0 (replicas Git declares): no drift', () => {
    const after = deployment(0, [deploymentApply(T_APPLY, ['replicas']), replicasUpdate('flagger')]);
    expect(driftWrites(before, after, FLUX)).toEqual([]);
    // …nor when the console knows the field is Git's from an earlier episode
    expect(driftWrites(before, after, FLUX, ['spec.replicas'])).toEqual([]);
  });

  it('kubectl edit of the same field is a person’s drift', () => {
    const after = deployment(0, [deploymentApply(T_APPLY, ['replicas']), replicasUpdate('kubectl-edit')]);
    expect(summary(driftWrites(before, after, FLUX))).toEqual([
      ['person', 'kubectl-edit', [{ path: 'spec.replicas', from: 2, to: 0 }]],
    ]);
  });

  it('Flagger changing a container image (not a field it writes) is a conflict, shown', () => {
    const after = deployment(2, [deploymentApply(T_APPLY, ['image']), imageUpdate('flagger')], 'evil:latest');
    expect(summary(driftWrites(before, after, FLUX))).toEqual([
      [
        'conflict',
        'flagger',
        [
          {
            path: 'spec.template.spec.containers[name=podinfo].image',
            from: 'ghcr.io/stefanprodan/podinfo:6.7.0',
            to: 'evil:latest',
          },
        ],
      ],
    ]);
  });

  it('one Flagger write touching both: only the field outside its rules is reported', () => {
    const both = {
      ...imageUpdate('flagger'),
      fieldsV1: {
        'f:spec': {
          'f:replicas': {},
          'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"podinfo"}': { 'f:image': {} } } } },
        },
      },
    };
    const after = deployment(0, [deploymentApply(T_APPLY, ['replicas', 'image']), both], 'evil:latest');
    expect(driftWrites(before, after, FLUX).flatMap((w) => w.fields.map((f) => f.path))).toEqual([
      'spec.template.spec.containers[name=podinfo].image',
    ]);
  });

  it("pointing the apex Service Git declares at <target>-primary: Flagger's, no drift", () => {
    const git = service('podinfo', { 'app.kubernetes.io/name': 'podinfo' }, [serviceApply()]);
    const after = service('podinfo', { 'app.kubernetes.io/name': 'podinfo-primary' }, [
      serviceApply(T_APPLY, ['selector']),
      selectorUpdate('flagger'),
    ]);
    expect(driftWrites(git, after, FLUX)).toEqual([]);
  });
});

describe('driftWrites next to Argo Rollouts', () => {
  const SELECTOR = { 'app.kubernetes.io/name': 'podinfo' };
  const HASH = 'rollouts-pod-template-hash';
  const before = service('podinfo-stable', SELECTOR, [serviceApply()]);

  it('its rollouts-pod-template-hash on the stable Service (through the atomic selector Git declares): no drift', () => {
    const after = service(
      'podinfo-stable',
      { ...SELECTOR, [HASH]: '5f7c9d8b6' },
      [serviceApply(T_APPLY, ['selector']), rolloutsSwitch()],
      { 'argo-rollouts.argoproj.io/managed-by-rollouts': 'podinfo' },
    );
    expect(driftWrites(before, after, FLUX)).toEqual([]);
    // the next rollout switches it to the new ReplicaSet
    const next = service(
      'podinfo-stable',
      { ...SELECTOR, [HASH]: '7d94c6f5b' },
      [serviceApply(T_APPLY, ['selector']), rolloutsSwitch('2026-12-01T10:20:00Z')],
      { 'argo-rollouts.argoproj.io/managed-by-rollouts': 'podinfo' },
    );
    expect(driftWrites(after, next, FLUX, [`spec.selector["${HASH}"]`])).toEqual([]);
  });

  it('the same hash written by kubectl edit is drift', () => {
    const after = service('podinfo-stable', { ...SELECTOR, [HASH]: '5f7c9d8b6' }, [
      serviceApply(T_APPLY, ['selector']),
      selectorUpdate('kubectl-edit'),
    ]);
    expect(summary(driftWrites(before, after, FLUX))).toEqual([
      ['person', 'kubectl-edit', [{ path: `spec.selector["${HASH}"]`, to: '5f7c9d8b6' }]],
    ]);
  });

  it('its selector write that changes a key Git declares is a conflict (not a field it writes)', () => {
    const after = service('podinfo-stable', { 'app.kubernetes.io/name': 'other', [HASH]: '5f7c9d8b6' }, [
      serviceApply(T_APPLY, ['selector']),
      rolloutsSwitch(T_WRITE),
    ]);
    expect(summary(driftWrites(before, after, FLUX))).toEqual([
      [
        'conflict',
        'rollouts-controller',
        [{ path: 'spec.selector["app.kubernetes.io/name"]', from: 'podinfo', to: 'other' }],
      ],
    ]);
  });
});
