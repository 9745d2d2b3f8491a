import { describe, expect, it } from 'vitest';
import { FreezeChangesResponse } from './freeze.ts';

const change = {
  id: 'c1',
  appId: 'prod/flux-system/kustomization/digital-human-prod',
  path: 'p',
  manager: 'kubectl-edit',
};
const ref = {
  cluster: 'prod',
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  namespace: 'prod',
  name: 'render-worker',
};

describe('FreezeChangesResponse', () => {
  it('a field added by hand (no Git value) and one removed by hand (no live value) are live changes too', () => {
    // JSON has no undefined: the absent side is an absent key (an incident edit adding an env var hit this)
    const body = JSON.parse(
      JSON.stringify({
        changes: [
          {
            ...change,
            ref,
            path: 'spec.replicas',
            git: 8,
            live: 12,
            operation: 'Update',
            time: '2026-12-01T10:00:00Z',
          },
          {
            ...change,
            id: 'c2',
            ref,
            path: 'spec.template.spec.containers[name=render].env[name=DEBUG_TRACE].value',
            git: undefined,
            live: '1',
            operation: 'Update',
            time: '2026-12-01T10:00:00Z',
          },
          {
            ...change,
            id: 'c3',
            ref,
            path: 'metadata.annotations.team',
            git: 'a',
            live: undefined,
            operation: 'Update',
            time: '2026-12-01T10:00:00Z',
          },
        ],
        unknown: [],
      }),
    );
    const r = FreezeChangesResponse.safeParse(body);
    expect(r.error?.issues).toBeUndefined();
    expect(r.data?.changes.map((c) => [c.git, c.live])).toEqual([
      [8, 12],
      [undefined, '1'],
      ['a', undefined],
    ]);
  });
});
