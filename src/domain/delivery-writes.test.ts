import { describe, expect, it } from 'vitest';
import { DELIVERY_WRITES, deliveryWriteOf, groupKindOf, isDeliveryWrite } from './delivery-writes.ts';
import { DELIVERY_CONTROLLER_MANAGERS } from './field-managers.ts';

const DEPLOYMENT = { group: 'apps', kind: 'Deployment' };
const DAEMONSET = { group: 'apps', kind: 'DaemonSet' };
const SERVICE = { group: '', kind: 'Service' };
const INGRESS = { group: 'networking.k8s.io', kind: 'Ingress' };
const VS = { group: 'networking.istio.io', kind: 'VirtualService' };
const DR = { group: 'networking.istio.io', kind: 'DestinationRule' };

describe('deliveryWriteOf: what Argo Rollouts and Flagger legitimately write', () => {
  it.each<[string, { group: string; kind: string }, string]>([
    ['flagger', DEPLOYMENT, 'spec.replicas'],
    ['flagger', DAEMONSET, 'spec.template.spec.nodeSelector["flagger.app/scale-to-zero"]'],
    // the apex Service: its whole selector and ports
    ['flagger', SERVICE, 'spec.selector["app.kubernetes.io/name"]'],
    ['flagger', SERVICE, 'spec.selector'],
    ['flagger', SERVICE, 'spec.ports[port=80,protocol=TCP].targetPort'],
    [
      'flagger',
      { group: 'keda.sh', kind: 'ScaledObject' },
      'metadata.annotations["autoscaling.keda.sh/paused-replicas"]',
    ],
    ['rollouts-controller', SERVICE, 'spec.selector["rollouts-pod-template-hash"]'],
    ['rollouts-controller', SERVICE, 'metadata.annotations["argo-rollouts.argoproj.io/managed-by-rollouts"]'],
    ['rollouts-controller', DEPLOYMENT, 'spec.replicas'],
    ['rollouts-controller', INGRESS, 'metadata.annotations["alb.ingress.kubernetes.io/actions.podinfo-root"]'],
    ['rollouts-controller', INGRESS, 'metadata.annotations["alb.ingress.kubernetes.io/conditions.podinfo-root"]'],
    [
      'rollouts-controller',
      { group: 'extensions', kind: 'Ingress' },
      'metadata.annotations["rollouts.argoproj.io/managed-alb-annotations"]',
    ],
    ['rollouts-controller', VS, 'spec.http[name=primary].route'],
    ['rollouts-controller', VS, 'spec.tcp[0].route'],
    ['rollouts-controller', DR, 'spec.subsets[name=canary].labels["rollouts-pod-template-hash"]'],
    [
      'rollouts-controller',
      { group: 'traefik.io', kind: 'TraefikService' },
      'spec.weighted.services[name=podinfo-canary].weight',
    ],
  ])('%s may write %j %s', (manager, target, path) => {
    expect(isDeliveryWrite(manager, target, path)).toBe(true);
  });

  it.each<[string, { group: string; kind: string }, string]>([
    // the same fields by a person's tool or another controller: not theirs to accept
    ['kubectl-edit', DEPLOYMENT, 'spec.replicas'],
    ['kubectl-argo-rollouts', SERVICE, 'spec.selector["rollouts-pod-template-hash"]'],
    ['horizontal-pod-autoscaler', DEPLOYMENT, 'spec.replicas'],
    // fields their source never writes
    ['flagger', DEPLOYMENT, 'spec.template.spec.containers[name=podinfo].image'],
    ['flagger', DEPLOYMENT, 'metadata.annotations["flagger.app/config-tracking"]'],
    ['flagger', DAEMONSET, 'spec.template.spec.nodeSelector["kubernetes.io/os"]'],
    ['rollouts-controller', SERVICE, 'spec.selector["app.kubernetes.io/name"]'],
    ['rollouts-controller', SERVICE, 'spec.ports[port=80,protocol=TCP].targetPort'],
    ['rollouts-controller', VS, 'spec.http[name=primary].timeout'],
    ['rollouts-controller', INGRESS, 'metadata.annotations["alb.ingress.kubernetes.io/scheme"]'],
    // the rule is per kind and group: Flagger scales Deployments, not StatefulSets; a Service is core
    ['flagger', { group: 'apps', kind: 'StatefulSet' }, 'spec.replicas'],
    ['flagger', { group: 'example.com', kind: 'Service' }, 'spec.selector.app'],
    ['rollouts-controller', { group: '', kind: 'Deployment' }, 'spec.replicas'],
    // a leaf rule is not a subtree rule
    ['flagger', DEPLOYMENT, 'spec.replicas.extra'],
  ])('%s writing %j %s is not', (manager, target, path) => {
    expect(deliveryWriteOf(manager, target, path)).toBeUndefined();
  });

  it('names the rule, with why', () => {
    expect(deliveryWriteOf('flagger', DEPLOYMENT, 'spec.replicas')).toMatchObject({
      controller: 'flagger',
      why: expect.stringContaining('ScaleToZero'),
    });
    expect(deliveryWriteOf('flagger', undefined, 'spec.replicas')).toBeUndefined();
  });

  it('every rule is written for a delivery controller the managers list knows, with a path that matches itself', () => {
    const known = Object.keys(DELIVERY_CONTROLLER_MANAGERS);
    for (const rule of DELIVERY_WRITES) {
      expect(known).toContain(rule.controller);
      const manager = DELIVERY_CONTROLLER_MANAGERS[rule.controller][0]!;
      const example = rule.path.replaceAll('[*]', '[name=x]').replaceAll('*', 'svc');
      for (const group of rule.groups) expect(isDeliveryWrite(manager, { group, kind: rule.kind }, example)).toBe(true);
    }
    expect(Object.isFrozen(DELIVERY_WRITES)).toBe(true);
  });
});

describe('groupKindOf', () => {
  it.each<[unknown, { group: string; kind: string } | undefined]>([
    [{ apiVersion: 'apps/v1', kind: 'Deployment' }, DEPLOYMENT],
    [{ apiVersion: 'v1', kind: 'Service' }, SERVICE],
    [{ kind: 'Service' }, undefined],
    [null, undefined],
  ])('%j → %j', (o, want) => expect(groupKindOf(o)).toEqual(want));
});
