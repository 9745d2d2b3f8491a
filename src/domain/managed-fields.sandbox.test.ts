// ownersByPath on managedFields captured from the real sandbox kube-apiserver (scripts/capture-managed-fields.ts):
// kustomize-controller Apply, kubectl-edit Update (replicas moved to an HPA-style /scale writer afterwards,
// an env var added by hand), kube-controller-manager on the scale and status subresources, and a Service
// annotation written by a cloud controller.
import { describe, expect, it } from 'vitest';
import fixture from './fixtures/managed-fields-sandbox.json' with { type: 'json' };
import { managersOf, ownersByPath } from './managed-fields.ts';

const dep = ownersByPath(fixture.deployment);
const svc = ownersByPath(fixture.service);
const managers = (o: ReturnType<typeof ownersByPath>, p: string) =>
  (o[p] ?? []).map((x) => `${x.manager}:${x.operation}${x.subresource ? `/${x.subresource}` : ''}`);

describe('ownersByPath on real sandbox managedFields', () => {
  it.each([
    ['spec.replicas', ['kube-controller-manager:Update/scale']],
    ['spec.template.spec.containers[name=render].image', ['kustomize-controller:Apply']],
    ['spec.template.spec.containers[name=render].env[name=DEBUG_TRACE].value', ['kubectl-edit:Update']],
    ['spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value', ['kustomize-controller:Apply']],
    [
      'spec.template.spec.containers[name=render].ports[containerPort=8080,protocol=TCP].containerPort',
      ['kustomize-controller:Apply'],
    ],
    ['metadata.labels["app.kubernetes.io/name"]', ['kustomize-controller:Apply']],
    ['metadata.labels["kustomize.toolkit.fluxcd.io/name"]', ['kustomize-controller:Apply']],
    ['status.replicas', ['kube-controller-manager:Update/status']],
    // the deployment controller writes its revision annotation in the same request as the status
    ['metadata.annotations["deployment.kubernetes.io/revision"]', ['kube-controller-manager:Update/status']],
  ])('Deployment %s → %j', (path, want) => expect(managers(dep, path)).toEqual(want));

  it.each([
    ['metadata.annotations["service.beta.kubernetes.io/load-balancer-id"]', ['cloud-lb-controller:Update']],
    ['spec.ports[port=80,protocol=TCP].targetPort', ['kustomize-controller:Apply']],
    // a Service selector is an atomic map: owned as a whole
    ['spec.selector', ['kustomize-controller:Apply']],
  ])('Service %s → %j', (path, want) => expect(managers(svc, path)).toEqual(want));

  it('keeps times and lists every manager of the object in order', () => {
    expect(dep['spec.template.spec.containers[name=render].env[name=DEBUG_TRACE].value']?.[0]?.time).toMatch(
      /^\d{4}-\d\d-\d\dT/,
    );
    // the apiserver records no time for the /scale writer's entry: time stays optional
    expect(dep['spec.replicas']?.[0]).not.toHaveProperty('time');
    expect(managersOf(fixture.deployment)).toEqual(
      fixture.deployment.metadata.managedFields.map((m) => m.manager).filter((m, i, a) => a.indexOf(m) === i),
    );
    expect(managersOf(fixture.deployment).sort()).toEqual([
      'kube-controller-manager',
      'kubectl-edit',
      'kustomize-controller',
    ]);
  });
});
