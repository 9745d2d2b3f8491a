import { describe, expect, it } from 'vitest';
import { kustomizeEdits, unsupportedKustomizeOptions } from './argo-kustomize.ts';

describe('an Argo CD kustomize source’s options, as Argo CD applies them', () => {
  it('kustomize edit commands in Argo CD’s order', () => {
    expect(
      kustomizeEdits({
        namePrefix: 'alpha-',
        nameSuffix: '-v2',
        images: ['nginx=nginx:1.27'],
        commonLabels: { team: 'web' },
        namespace: 'staging',
      }),
    ).toEqual([
      ['edit', 'set', 'nameprefix', '--', 'alpha-'],
      ['edit', 'set', 'namesuffix', '--', '-v2'],
      ['edit', 'set', 'image', 'nginx=nginx:1.27'],
      ['edit', 'add', 'label', '--force', 'team:web'],
      ['edit', 'set', 'namespace', '--', 'staging'],
    ]);
    expect(kustomizeEdits({})).toEqual([]);
  });

  it('an option the console does not apply fails the render: unknown, never a wrong desired state', () => {
    expect(unsupportedKustomizeOptions({ patches: [{ patch: 'x' }], namePrefix: 'a-' })).toEqual(['patches']);
  });
});
