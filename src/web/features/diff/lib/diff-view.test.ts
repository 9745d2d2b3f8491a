import { describe, expect, it } from 'vitest';
import type { FieldChangeDto } from '../../../../api/schemas.ts';
import { fixFor, ownerLabel } from './diff-view.ts';

const change = (...managers: string[]): FieldChangeDto => ({
  path: 'spec.replicas',
  owners: managers.map((manager) => ({ manager, operation: 'Update' })),
  class: 'drift',
});

describe('ownerLabel', () => {
  it.each<[string[], string]>([
    [['kustomize-controller', 'kubectl-edit'], 'kubectl-edit'],
    [['helm-controller', 'kubectl-edit'], 'kubectl-edit'],
    [['argocd-application-controller', 'kube-controller-manager'], 'kube-controller-manager'],
    [['argocd-controller'], 'argocd-controller'],
    [[], 'no owner'],
  ])('%j → %s', (managers, want) => expect(ownerLabel(change(...managers))).toBe(want));
});

describe('fixFor', () => {
  const target = { group: '', kind: 'Service', name: 'render' };
  it('offers the JSON pointer of a slash key, escaped as RFC 6901 says', () => {
    const fix = fixFor('argocd', target, 'metadata.annotations["service.beta.kubernetes.io/foo"]', 'cloud-lb');
    expect(fix).toContain('managedFieldsManagers:\n        - cloud-lb');
    expect(fix).toContain('jsonPointers: ["/metadata/annotations/service.beta.kubernetes.io~1foo"]');
  });
  it('offers no pointer for a field of a keyed list item (a pointer needs its index)', () => {
    const fix = fixFor('argocd', target, 'spec.ports[port=80,protocol=TCP].nodePort', 'cloud-lb');
    expect(fix).toContain('- cloud-lb');
    expect(fix).not.toContain('jsonPointers');
  });
  it('names the path for Flux', () => {
    expect(fixFor('flux', target, 'data["api-key"]', 'kubectl-edit')).toContain(
      'stop declaring data["api-key"] in Git',
    );
  });
});
