// The field diff next to Argo Rollouts and Flagger: their own writes are `delivery` (never drift, never a
// conflict to fix), the same field by a person's tool is drift, and whatever else they own is a conflict.
import { describe, expect, it } from 'vitest';
import { fieldDiff, type DiffMode, type FieldChange } from './field-diff.ts';
import {
  asRendered,
  deployment,
  deploymentApply,
  imageUpdate,
  replicasUpdate,
  rolloutsSwitch,
  selectorUpdate,
  service,
  serviceApply,
  T_APPLY,
} from './fixtures/delivery-objects.ts';

type Obj = Record<string, unknown>;
const FLUX = ['kustomize-controller'];
const MODES: DiffMode[] = ['server-dry-run', 'normalized'];

/** The diff of live against Git (the dry-run predicts Git's values: Flux applies with force) */
const diff = (git: Obj, live: Obj, mode: DiffMode, ignore?: { jsonPointers: string[] }): Record<string, FieldChange> =>
  Object.fromEntries(
    fieldDiff({
      desired: asRendered(git),
      predicted: asRendered(git),
      live,
      controllerManagers: FLUX,
      mode,
      ...(ignore ? { ignore } : {}),
    }).map((c) => [c.path, c]),
  );

describe.each(MODES)('fieldDiff (%s) next to progressive-delivery controllers', (mode) => {
  const git = deployment(2, []);

  it('Flagger scaling its target Deployment to 0 after promoting the canary: delivery, not drift', () => {
    const live = deployment(0, [deploymentApply(T_APPLY, ['replicas']), replicasUpdate('flagger')]);
    expect(diff(git, live, mode)['spec.replicas']).toMatchObject({
      predicted: 2,
      live: 0,
      class: 'delivery',
      owners: [expect.objectContaining({ manager: 'flagger', operation: 'Update' })],
    });
  });

  it('the same field written by kubectl edit is drift', () => {
    const live = deployment(0, [deploymentApply(T_APPLY, ['replicas']), replicasUpdate('kubectl-edit')]);
    expect(diff(git, live, mode)['spec.replicas']?.class).toBe('drift');
  });

  it('Argo Rollouts scaling the Deployment a Rollout references (workloadRef): delivery', () => {
    const live = deployment(0, [deploymentApply(T_APPLY, ['replicas']), replicasUpdate('rollouts-controller')]);
    expect(diff(git, live, mode)['spec.replicas']?.class).toBe('delivery');
  });

  it('a field Flagger owns outside its rules (a container image) stays a conflict', () => {
    const live = deployment(2, [deploymentApply(T_APPLY, ['image']), imageUpdate('flagger')], 'evil:latest');
    const changes = diff(git, live, mode);
    expect(changes['spec.template.spec.containers[name=podinfo].image']).toMatchObject({
      live: 'evil:latest',
      class: 'conflict',
    });
    expect(changes['spec.replicas']).toBeUndefined();
  });

  it('an ignore rule still wins over the delivery class', () => {
    const live = deployment(0, [deploymentApply(T_APPLY, ['replicas']), replicasUpdate('flagger')]);
    expect(diff(git, live, mode, { jsonPointers: ['/spec/replicas'] })['spec.replicas']?.class).toBe('ignored');
  });

  it('Flagger pointing the apex Service Git declares at <target>-primary: delivery', () => {
    const gitSvc = service('podinfo', { 'app.kubernetes.io/name': 'podinfo' }, []);
    const live = service('podinfo', { 'app.kubernetes.io/name': 'podinfo-primary' }, [
      serviceApply(T_APPLY, ['selector']),
      selectorUpdate('flagger'),
    ]);
    expect(diff(gitSvc, live, mode)['spec.selector["app.kubernetes.io/name"]']).toMatchObject({
      live: 'podinfo-primary',
      class: 'delivery',
    });
    // by hand, the same selector is drift
    const byHand = service('podinfo', { 'app.kubernetes.io/name': 'podinfo-primary' }, [
      serviceApply(T_APPLY, ['selector']),
      selectorUpdate('kubectl-edit'),
    ]);
    expect(diff(gitSvc, byHand, mode)['spec.selector["app.kubernetes.io/name"]']?.class).toBe('drift');
  });

  it("Argo Rollouts' rollouts-pod-template-hash on the stable Service is neither drift nor a conflict", () => {
    const gitSvc = service('podinfo-stable', { 'app.kubernetes.io/name': 'podinfo' }, []);
    const live = service(
      'podinfo-stable',
      { 'app.kubernetes.io/name': 'podinfo', 'rollouts-pod-template-hash': '5f7c9d8b6' },
      [serviceApply(T_APPLY, ['selector']), rolloutsSwitch()],
      { 'argo-rollouts.argoproj.io/managed-by-rollouts': 'podinfo' },
    );
    const changes = Object.values(diff(gitSvc, live, mode));
    expect(changes.filter((c) => c.class === 'drift' || c.class === 'conflict')).toEqual([]);
    // the Git selector key it now owns through the atomic selector is unchanged: nothing to show
    expect(changes.map((c) => c.path)).not.toContain('spec.selector["app.kubernetes.io/name"]');
  });
});
