import { describe, expect, it } from 'vitest';
import { batchProgress, riskSummary } from './prune-risk.ts';

const s = (deletions: number, protectedN: number, cascades: number) => ({
  candidates: deletions + protectedN,
  deletions,
  protected: protectedN,
  cascades,
});

describe('riskSummary', () => {
  it.each([
    ['ready', s(3, 1, 240), '3 objects to delete, 1 protected, cascades to 240 more objects'],
    ['ready', s(1, 0, 0), '1 object to delete'],
    ['nothing', s(0, 0, 0), 'Nothing will be deleted'],
    ['nothing', s(0, 2, 0), 'Nothing will be deleted (2 protected objects kept)'],
    ['unknown', s(0, 0, 0), 'Unknown: the desired state could not be determined, so nothing can be deleted'],
  ] as const)('%s %o → %s', (plan, summary, text) => {
    expect(riskSummary({ plan, summary })).toBe(text);
  });

  const c = (over: { protectedBy?: string; blockedBy?: string; cascadesUnknown?: string }) => ({
    ref: { cluster: 'c', group: '', version: 'v1', kind: 'Namespace', name: 'n' },
    id: 'c/core/Namespace/_/n',
    uid: 'u',
    resourceVersion: '1',
    protectedBy: over.protectedBy ?? null,
    blockedBy: over.blockedBy ?? null,
    cascadesUnknown: over.cascadesUnknown ?? null,
    cascades: [],
    finalizers: [],
    createdAt: null,
    lastWriter: null,
    deletable: !over.protectedBy && !over.blockedBy && !over.cascadesUnknown,
  });
  it.each([
    [
      'ready',
      s(2, 0, 0),
      [c({}), c({}), c({ blockedBy: 'its Pod x is protected' }), c({ cascadesUnknown: 'cannot list secrets' })],
      '2 objects to delete, 1 blocked, 1 unknown (kept)',
    ],
    [
      'nothing',
      s(0, 1, 0),
      [c({ protectedBy: 'p' }), c({ blockedBy: 'its Pod x is protected' })],
      'Nothing will be deleted (1 protected object kept, 1 blocked by a protected object that would go with it)',
    ],
    [
      'unknown',
      s(0, 0, 0),
      [c({ cascadesUnknown: 'cannot list secrets' })],
      'Unknown: what 1 object would take with it could not be listed, so nothing can be deleted',
    ],
  ] as const)('with candidates: %s → %s', (plan, summary, candidates, text) => {
    expect(riskSummary({ plan, summary, candidates: [...candidates] })).toBe(text);
  });
});

describe('batchProgress', () => {
  const j = (batch: number, state: 'planned' | 'deleted' | 'failed') => ({
    position: 0,
    batch,
    object: 'x',
    state,
    detail: null,
    updatedAt: '',
  });
  it('counts finished batches and failures', () => {
    expect(batchProgress({ journal: [] })).toEqual({ done: 0, total: 0, failed: false });
    expect(batchProgress({ journal: [j(0, 'deleted'), j(0, 'deleted'), j(1, 'planned')] })).toEqual({
      done: 1,
      total: 2,
      failed: false,
    });
    expect(batchProgress({ journal: [j(0, 'deleted'), j(1, 'failed')] })).toMatchObject({ done: 1, failed: true });
  });
});
