import { describe, expect, it } from 'vitest';
import type { FieldChange } from '../../domain/field-diff.ts';
import { summarizeDiff, type ObjectDiff } from './app-diff.ts';

const drifted = (...managers: string[]): ObjectDiff => ({
  ref: { cluster: 'c', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name: 'render' },
  status: 'changed',
  mode: 'server-dry-run',
  changes: [
    {
      path: 'spec.replicas',
      owners: managers.map((manager) => ({ manager, operation: 'Update', time: '2026-11-30T12:00:00Z' })),
      class: 'drift',
    } satisfies FieldChange,
  ],
});

describe('summarizeDiff names who drifted, never the GitOps controller itself', () => {
  const now = Date.parse('2026-11-30T12:10:00Z');
  it.each<[string[], string]>([
    [['argocd-application-controller', 'kubectl-edit'], 'written by kubectl-edit 10 min ago'],
    [['argocd-controller', 'kubectl-edit'], 'written by kubectl-edit 10 min ago'],
    [['kustomize-controller', 'helm-controller', 'kubectl-patch'], 'written by kubectl-patch 10 min ago'],
    [['argocd-application-controller'], 'written by another manager'],
  ])('%j → %s', (managers, want) =>
    expect(summarizeDiff([drifted(...managers)], now)).toBe(`1 field drifted, ${want}`),
  );
});
