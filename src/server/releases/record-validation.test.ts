// The validation state from the diff's server-side dry-runs: accepted, rejected (the API server's words),
// unchecked; extraneous objects are not part of the render; an unknown render throws.
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { AppDiff } from '../diff/app-diff.ts';
import { validateRender } from './record-validation.ts';

const app = { id: 'c/flux-system/kustomization/web' } as unknown as App;
const diffs = (d: unknown) => ({ diff: async () => d as AppDiff });

describe('validateRender', () => {
  it('counts accepted objects, names rejected and unchecked ones', async () => {
    const v = await validateRender(
      diffs({
        state: 'drift',
        render: { revision: 'main@sha1:x', renderHash: 'sha256:h' },
        objects: [
          { status: 'in-sync', mode: 'server-dry-run', ref: { kind: 'Service', namespace: 'web', name: 'a' } },
          {
            status: 'drift',
            mode: 'client',
            note: 'server-side dry-run failed: spec.replicas: Invalid value: -1',
            ref: { kind: 'Deployment', namespace: 'web', name: 'b' },
          },
          { status: 'drift', mode: 'client', note: 'dry-run forbidden', ref: { kind: 'Namespace', name: 'web' } },
          { status: 'missing', mode: 'client', ref: { kind: 'ConfigMap', namespace: 'web', name: 'c' } },
          { status: 'extraneous', mode: 'client', ref: { kind: 'Secret', namespace: 'web', name: 'd' } },
        ],
      }),
      app,
    );
    expect(v).toEqual({
      revision: 'main@sha1:x',
      renderHash: 'sha256:h',
      accepted: 1,
      rejected: [{ object: 'Deployment/web/b', reason: 'spec.replicas: Invalid value: -1' }],
      unchecked: [
        { object: 'Namespace/web', reason: 'dry-run forbidden' },
        { object: 'ConfigMap/web/c', reason: 'not dry-run' },
      ],
    });
  });
  it('throws when the render is unknown', async () => {
    await expect(
      validateRender(diffs({ state: 'unknown', error: 'kustomize failed', objects: [] }), app),
    ).rejects.toThrow('kustomize failed');
  });
});
