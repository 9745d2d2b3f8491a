import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { DriftTracker, EndedDrift } from '../drift/tracker.ts';
import { reconcileStatus } from './reconcile-status.ts';

const REQ = '2026-12-01T23:08:10.123Z';
const flux = {
  id: 'nonprod/flux-system/kustomization/digital-human-dev',
  controller: 'flux',
  kind: 'Kustomization',
  name: 'digital-human-dev',
  source: { revisionObserved: 'main@sha1:3f2a1c9e0000000000000000000000000000000' },
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
} as App;
const argo = {
  id: 'nonprod/argocd/application/edge-gateway',
  controller: 'argocd',
  kind: 'Application',
  name: 'edge-gateway',
  source: { revisionObserved: 'abc1234' },
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
  simulated: 'status simulated',
} as App;

const kustomization = (handled: string | undefined, ready: { status: string; reason?: string; message?: string }) => ({
  metadata: {
    managedFields: [
      { manager: 'kustomize-controller', operation: 'Update', subresource: 'status', time: '2026-12-01T23:08:12Z' },
    ],
  },
  status: {
    ...(handled ? { lastHandledReconcileAt: handled } : {}),
    conditions: [{ type: 'Ready', ...ready }],
  },
});
const ended: EndedDrift[] = [
  {
    ref: {
      cluster: 'nonprod',
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      namespace: 'dev',
      name: 'tts-gateway',
    },
    how: 'reverted',
    managers: ['kubectl-scale'],
    fields: [{ path: 'spec.replicas', from: 1, to: 3 }],
    endedAt: '2026-12-01T23:08:11.500Z',
  },
];
const drift = { endedSince: (_id: string, since: string) => ended.filter((e) => e.endedAt >= since) } as DriftTracker;
const at = (iso: string) => () => Date.parse(iso);

describe('reconcileStatus', () => {
  it('Flux: pending until lastHandledReconcileAt reaches the request, then the applied revision and the reverts', () => {
    const before = kustomization('2026-12-01T22:00:00Z', { status: 'True' });
    expect(reconcileStatus(flux, REQ, { raw: () => before, drift, now: at('2026-12-01T23:08:11Z') })).toMatchObject({
      state: 'pending',
      reverted: [],
    });
    const after = kustomization(REQ, { status: 'True', reason: 'ReconciliationSucceeded' });
    expect(reconcileStatus(flux, REQ, { raw: () => after, drift, now: at('2026-12-01T23:08:13Z') })).toEqual({
      state: 'reconciled',
      requestedAt: REQ,
      reconciledAt: '2026-12-01T23:08:12Z',
      revision: flux.source.revisionObserved,
      reverted: [
        { object: 'nonprod/apps/Deployment/dev/tts-gateway', path: 'spec.replicas', managers: ['kubectl-scale'] },
      ],
      timeoutMs: 60_000,
    });
  });

  it('Flux: Ready=False after the request is the failure with its reason and message', () => {
    const failed = kustomization(REQ, {
      status: 'False',
      reason: 'BuildFailed',
      message: 'kustomize build failed: missing resource',
    });
    expect(reconcileStatus(flux, REQ, { raw: () => failed, now: at('2026-12-01T23:08:13Z') })).toMatchObject({
      state: 'failed',
      reason: 'BuildFailed',
      message: 'kustomize build failed: missing resource',
      reverted: [],
    });
  });

  it('not picked up within the timeout; suspended apps say why', () => {
    const before = kustomization(undefined, { status: 'True' });
    const late = at('2026-12-01T23:09:11Z');
    expect(reconcileStatus(flux, REQ, { raw: () => before, now: late })).toMatchObject({
      state: 'timeout',
      message: 'the controller did not pick the request up within 60 s',
    });
    const suspended = { ...flux, automation: { ...flux.automation, suspended: true } };
    expect(reconcileStatus(suspended, REQ, { raw: () => before, now: late }).message).toMatch(/is suspended/);
  });

  it('Argo CD: status.reconciledAt past the request; a failed operation is the failure', () => {
    const app = (reconciledAt: string, phase = 'Succeeded') => ({
      status: { reconciledAt, operationState: { phase, message: 'one or more objects failed to apply' } },
    });
    expect(
      reconcileStatus(argo, REQ, { raw: () => app('2026-12-01T23:00:00Z'), now: at('2026-12-01T23:08:11Z') }).state,
    ).toBe('pending');
    expect(
      reconcileStatus(argo, REQ, { raw: () => app('2026-12-01T23:08:12Z'), now: at('2026-12-01T23:08:13Z') }),
    ).toMatchObject({ state: 'reconciled', reconciledAt: '2026-12-01T23:08:12Z', revision: 'abc1234' });
    expect(
      reconcileStatus(argo, REQ, { raw: () => app('2026-12-01T23:08:12Z', 'Failed'), now: at('2026-12-01T23:08:13Z') }),
    ).toMatchObject({ state: 'failed', message: 'one or more objects failed to apply' });
    expect(
      reconcileStatus(argo, REQ, { raw: () => app('2026-12-01T23:00:00Z'), now: at('2026-12-01T23:09:11Z') }).message,
    ).toMatch(/no Argo CD controller/);
  });
});
