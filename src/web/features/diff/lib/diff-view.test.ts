import { describe, expect, it } from 'vitest';
import type { FieldChangeDto } from '../../../../api/schemas.ts';
import { fixFor, fixSnippet, lineBadges, ownerBadge, ownerHover, ownerLabel } from './diff-view.ts';

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

describe('ownerBadge', () => {
  it.each<[string[], string]>([
    [['kustomize-controller', 'flagger'], 'Flagger'],
    [['argocd-controller', 'rollouts-controller'], 'Argo Rollouts'],
    [['kustomize-controller', 'kubectl-edit'], 'kubectl-edit'],
  ])('%j → %s', (managers, want) => expect(ownerBadge(change(...managers))).toBe(want));

  it('reads on the editor line badge; the fix snippet keeps the raw manager', () => {
    const c: FieldChangeDto = { ...change('flagger'), class: 'delivery' };
    const o = {
      ref: { cluster: 'c', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name: 'podinfo' },
      status: 'changed',
      mode: 'server-dry-run',
      changes: [c],
      liveYaml: 'spec:\n  replicas: 0\n',
    } as const satisfies Parameters<typeof lineBadges>[0];
    expect(lineBadges(o, [c]).map((b) => [b.label, b.tone])).toEqual([['Flagger · delivery', 'other']]);
    expect(fixSnippet('argocd', o, c)).toContain('- flagger');
  });
});

describe('ownerHover', () => {
  it('says when each manager wrote, as every time in the console (with the zone), never a raw ISO string', () => {
    const c: FieldChangeDto = {
      ...change(),
      owners: [
        { manager: 'kustomize-controller', operation: 'Apply', time: '2026-12-01T08:47:12Z' },
        { manager: 'kubectl-scale', operation: 'Update', subresource: 'scale' },
      ],
    };
    expect(ownerHover(c, 'UTC')).toBe(
      'kustomize-controller: Apply at 2026-12-01 08:47:12 UTC\n\nkubectl-scale: Update on /scale',
    );
  });
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
