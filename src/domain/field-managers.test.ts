import { describe, expect, it } from 'vitest';
import { CONTROLLERS } from './app.ts';
import {
  DELIVERY_CONTROLLER_MANAGERS,
  GITOPS_CONTROLLER_MANAGERS,
  controllerManagersOf,
  deliveryControllerOf,
  isGitOpsControllerManager,
  isInteractiveManager,
  managerLabel,
} from './field-managers.ts';

describe('GitOps controller field managers', () => {
  it('lists every controller, each with the manager it applies as first', () => {
    expect(Object.keys(GITOPS_CONTROLLER_MANAGERS).sort()).toEqual([...CONTROLLERS].sort());
    expect(controllerManagersOf('flux')[0]).toBe('kustomize-controller');
    expect(controllerManagersOf('argocd')[0]).toBe('argocd-controller');
  });

  it.each([
    ['flux', 'kustomize-controller'],
    ['flux', 'helm-controller'],
    ['argocd', 'argocd-controller'],
    // Argo CD's client-side apply: the drift summary once blamed it for its own fields
    ['argocd', 'argocd-application-controller'],
  ] as const)('%s → %s', (controller, manager) => {
    expect(controllerManagersOf(controller)).toContain(manager);
    expect(isGitOpsControllerManager(manager)).toBe(true);
  });

  it.each(['kube-controller-manager', 'kubectl-edit', 'cloud-lb-controller', 'source-controller', 'argocd', ''])(
    '%j is not a GitOps controller manager',
    (manager) => expect(isGitOpsControllerManager(manager)).toBe(false),
  );

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(GITOPS_CONTROLLER_MANAGERS)).toBe(true);
    expect(Object.isFrozen(GITOPS_CONTROLLER_MANAGERS.flux)).toBe(true);
  });
});

describe('isInteractiveManager', () => {
  it.each(['kubectl', 'kubectl-edit', 'kubectl-client-side-apply', 'kubectl-patch', 'kubectl-label', 'k9s', 'Mozilla'])(
    '%s is a person’s tool',
    (m) => expect(isInteractiveManager(m)).toBe(true),
  );
  it.each([
    'kube-controller-manager',
    'kustomize-controller',
    'helm-controller',
    'argocd-controller',
    'cloud-lb-controller',
  ])('%s is not', (m) => expect(isInteractiveManager(m)).toBe(false));
});

describe('progressive-delivery controller managers', () => {
  it.each([
    // cmd/rollouts-controller: client-go's default user agent, the binary /bin/rollouts-controller
    ['rollouts-controller', 'argo-rollouts', 'Argo Rollouts'],
    // cmd/flagger: the binary ./flagger
    ['flagger', 'flagger', 'Flagger'],
  ] as const)('%s is %s', (manager, controller, label) => {
    expect(deliveryControllerOf(manager)).toBe(controller);
    expect(DELIVERY_CONTROLLER_MANAGERS[controller]).toContain(manager);
    expect(managerLabel(manager)).toBe(label);
    // neither a GitOps controller (their fields are not Git's) nor a person
    expect(isGitOpsControllerManager(manager)).toBe(false);
    expect(isInteractiveManager(manager)).toBe(false);
  });

  it("their kubectl plugin is a person's tool, and other managers keep their names", () => {
    expect(deliveryControllerOf('kubectl-argo-rollouts')).toBeUndefined();
    expect(isInteractiveManager('kubectl-argo-rollouts')).toBe(true);
    expect(managerLabel('kubectl-edit')).toBe('kubectl-edit');
    expect(managerLabel('kustomize-controller')).toBe('kustomize-controller');
    expect(deliveryControllerOf('argo-rollouts')).toBeUndefined();
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(DELIVERY_CONTROLLER_MANAGERS)).toBe(true);
    expect(Object.isFrozen(DELIVERY_CONTROLLER_MANAGERS.flagger)).toBe(true);
  });
});
