// An app's diff as one reader sees it (issue 40, item 8): the rows of objects in an environment they may not read
// are left out with everything that names them, counted, and the counts and summary are of what is shown.
import { describe, expect, it } from 'vitest';
import type { ObjectRef } from '../../domain/refs.ts';
import { OWNERSHIP_BY_OBJECT, type ObjectDiff } from './app-diff.ts';
import { diffSeenBy } from './diff-seen-by.ts';
import type { DiffResult } from './service.ts';

const ref = (namespace: string, name: string, kind = 'ConfigMap'): ObjectRef => ({
  cluster: 'nonprod',
  group: '',
  version: 'v1',
  kind,
  namespace,
  name,
});
const row = (r: ObjectRef, status: ObjectDiff['status'], live?: string): ObjectDiff => ({
  ref: r,
  status,
  mode: 'server-dry-run',
  changes:
    status === 'changed'
      ? [{ path: 'data.note', desired: 'git', predicted: 'git', live: live ?? 'x', owners: [], class: 'drift' }]
      : [],
  ...(live ? { liveYaml: `data:\n  note: ${live}\n` } : {}),
});

function diff(over: Partial<DiffResult> = {}): DiffResult {
  const objects = [
    row(ref('dev', 'settings'), 'changed', 'dev-live'),
    row(ref('staging', 'settings'), 'changed', 'staging-secret-value'),
    row(ref('staging', 'labelled'), 'extraneous', 'staging-secret-value'),
    row(ref('dev', 'worker', 'ServiceAccount'), 'unchanged'),
  ];
  return {
    appId: 'nonprod/flux-system/kustomization/app-dev',
    generatedAt: '2026-12-06T12:00:00Z',
    state: 'ok',
    render: {
      renderer: 'flux-render',
      revision: 'main@sha1:abc',
      renderHash: 'sha256:x',
      secretsInGit: [
        { name: 'creds', namespace: 'dev', file: 'app/creds.yaml', keys: [], sops: null },
        { name: 'creds', namespace: 'staging', file: 'app/cross.yaml', keys: [], sops: null },
      ],
    },
    counts: { changed: 2, missing: 0, extraneous: 1, unchanged: 1, unknown: 0, hook: 0 },
    summary: '2 fields drifted, written by kubectl; 1 extraneous',
    objects,
    ownership: [
      {
        manager: 'kubectl-edit',
        fields: 4,
        objects: 2,
        conflicts: [
          { object: 'ConfigMap dev/settings', path: 'data.note', with: ['kustomize-controller'] },
          { object: 'ConfigMap staging/settings', path: 'data.note', with: ['kustomize-controller'] },
        ],
      },
    ],
    prune: {
      state: 'unknown',
      reasons: [
        'ConfigMap staging/labelled is not deleted: what its deletion takes with it is unknown',
        'ConfigMap dev/old is not deleted: what its deletion takes with it is unknown',
      ],
      deletions: 0,
      protected: 0,
    },
    work: { renders: 0, dryRuns: 0, cachedObjects: 4, coalesced: false },
    ...over,
  };
}

const stagingHidden = (r: { namespace?: string | undefined }) => r.namespace === 'staging';

describe('diffSeenBy', () => {
  it('leaves out the rows in a hidden environment, and whatever names them; counts what it left out', () => {
    const d = diffSeenBy(diff(), stagingHidden, true);
    expect(d.objects.map((o) => `${o.ref.namespace}/${o.ref.name}`)).toEqual(['dev/settings', 'dev/worker']);
    expect(d.hiddenByEnvironment).toBe(2);
    expect(d.counts).toEqual({ changed: 1, missing: 0, extraneous: 0, unchanged: 1, unknown: 0, hook: 0 });
    // the summary is of the rows shown: one drifted field, nothing extraneous
    expect(d.summary).toBe('1 field drifted, written by another manager');
    expect(d.ownership[0]?.conflicts.map((c) => c.object)).toEqual(['ConfigMap dev/settings']);
    expect(d.prune?.reasons).toEqual(['ConfigMap dev/old is not deleted: what its deletion takes with it is unknown']);
    expect(d.render?.secretsInGit?.map((x) => x.namespace)).toEqual(['dev']);
    // no value or namespace of the hidden rows anywhere in the answer
    expect(JSON.stringify(d)).not.toContain('staging');
  });

  it('an empty render keeps its first words (the controller’s deletions are the app’s), then the rows shown', () => {
    const d = diffSeenBy(
      diff({
        emptyRender: true,
        objects: [row(ref('dev', 'a'), 'extraneous'), row(ref('staging', 'b'), 'extraneous')],
        prune: { state: 'needs-override', reasons: [], deletions: 2, protected: 0 },
      }),
      stagingHidden,
      true,
    );
    expect(d.summary).toBe(
      'the render is empty: the controller would delete 2 objects; a prune preview would need an override; 1 extraneous',
    );
    expect(d.hiddenByEnvironment).toBe(1);
  });

  it('nothing hidden: the same diff, no count', () => {
    const all = diff();
    expect(diffSeenBy(all, () => false, true)).toBe(all);
  });

  it("the ownership totals leave out the hidden objects' fields; a manager seen only on them is left out", () => {
    const shares = new Map([
      ['ConfigMap dev/settings', new Map([['kubectl-edit', 2]])],
      [
        'ConfigMap staging/settings',
        new Map([
          ['kubectl-edit', 2],
          ['staging-operator', 5],
        ]),
      ],
    ]);
    const full = diff({
      ownership: [...diff().ownership, { manager: 'staging-operator', fields: 5, objects: 1, conflicts: [] }],
    });
    const d = diffSeenBy({ ...full, [OWNERSHIP_BY_OBJECT]: shares }, stagingHidden, true);
    expect(d.ownership.map((r) => [r.manager, r.fields, r.objects])).toEqual([['kubectl-edit', 2, 1]]);
    // what the reader may read in full keeps its totals
    const all = diffSeenBy({ ...full, [OWNERSHIP_BY_OBJECT]: shares }, () => false, true);
    expect(all.ownership.map((r) => [r.manager, r.fields, r.objects])).toEqual([
      ['kubectl-edit', 4, 2],
      ['staging-operator', 5, 1],
    ]);
    // never sent: the symbol's map is not in the JSON
    expect(JSON.stringify(d)).not.toContain('staging-operator');
  });
});
