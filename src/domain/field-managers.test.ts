import { describe, expect, it } from 'vitest';
import { CONTROLLERS } from './app.ts';
import {
  GITOPS_CONTROLLER_MANAGERS,
  controllerManagersOf,
  isGitOpsControllerManager,
  isInteractiveManager,
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
