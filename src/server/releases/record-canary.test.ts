// The recorder with a canary: each step recorded once; health waits while the canary runs; the verification is
// the canary's outcome (an abort fails it with the measured reason, a Rollout the console cannot see is unknown).
import { describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import { canaryPhase, recordCanarySteps } from './record-canary.ts';
import { recordVerification } from './record-verification.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';
import type { StateContext, Tracked } from './tracking.ts';

const app = {
  id: 'nonprod/argocd/application/checkout-staging',
  name: 'checkout-staging',
  cluster: 'nonprod',
  env: 'staging',
  inventory: [{ group: 'argoproj.io', version: 'v1alpha1', kind: 'Rollout', namespace: 'staging', name: 'checkout' }],
} as unknown as App;

const steps = [{ setWeight: 20 }, { pause: {} }, { analysis: { templates: [{ templateName: 'bc' }] } }];
let live: Record<string, unknown> | undefined;
const runs: Array<Record<string, unknown>> = [];
function context() {
  const index = {
    get: () => live,
    childrenOf: () => runs,
  } as unknown as ObjectIndex;
  const states: Array<{ state: string; data: Record<string, unknown> }> = [];
  const other: Array<{ type: string; actor: string; data: Record<string, unknown> }> = [];
  const o = { index, log: { info() {}, warn() {} } } as unknown as ReleaseRecorderOptions;
  const ctx: StateContext = {
    o,
    emit: (_a, rel, state, _actor, data) => {
      states.push({ state, data });
      rel.recorded.set(state, { status: String(data.status ?? 'ok'), time: '' });
    },
    emitOther: (_a, _r, type, actor, data) => void other.push({ type, actor, data }),
  };
  return { ctx, states, other };
}
const rel = (): Tracked => ({
  sha: 'e'.repeat(40),
  revision: 'main',
  seenAt: Date.now(),
  recorded: new Map([['reconcile', { status: 'ok', time: '' }]]),
  healthAt: Date.now(),
  commitTime: new Date(Date.now() - 120_000).toISOString(),
});
const rollout = (status: Record<string, unknown>) => ({
  metadata: { uid: 'u1', namespace: 'staging', name: 'checkout', generation: 2 },
  spec: { strategy: { canary: { steps } } },
  status: { observedGeneration: '2', stableRS: 'old', currentPodHash: 'new', ...status },
});

describe('record-canary', () => {
  it('each step once; the verification waits while the canary runs', async () => {
    const { ctx, states, other } = context();
    const r = rel();
    live = rollout({ phase: 'Paused', currentStepIndex: 1, pauseConditions: [{ reason: 'CanaryPauseStep' }] });
    recordCanarySteps(ctx, app, r);
    recordCanarySteps(ctx, app, r);
    expect(other).toHaveLength(1);
    expect(other[0]).toMatchObject({ type: 'release.canary', actor: 'argo-rollouts', data: { step: 2, weight: 20 } });
    expect(canaryPhase(ctx, app)).toBe('running');
    await recordVerification(ctx, app, r, false);
    expect(states).toHaveLength(0);
    live = rollout({ phase: 'Progressing', currentStepIndex: 2 });
    recordCanarySteps(ctx, app, r);
    expect(other).toHaveLength(2);
  });

  it('aborted: the verification fails at once with the measured reason', async () => {
    const { ctx, states } = context();
    live = rollout({ phase: 'Degraded', abort: true, currentStepIndex: 2 });
    runs.splice(0, runs.length, {
      metadata: { name: 'checkout-new-2', labels: { 'rollouts-pod-template-hash': 'new' } },
      spec: { metrics: [{ name: 'business-endpoint' }] },
      status: {
        phase: 'Error',
        metricResults: [
          { name: 'business-endpoint', phase: 'Error', measurements: [{ phase: 'Error', message: 'received 503' }] },
        ],
      },
    });
    expect(canaryPhase(ctx, app)).toBe('aborted');
    await recordVerification(ctx, app, rel(), false);
    expect(states[0]?.data).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('analysis checkout-new-2 business-endpoint error: received 503') as unknown,
    });
  });

  it('promoted: ok, with when (lead time ends here)', async () => {
    const { ctx, states } = context();
    live = rollout({ phase: 'Healthy', currentStepIndex: 3, stableRS: 'new' });
    await recordVerification(ctx, app, rel(), false);
    const d = states[0]?.data as { status: string; canary: { promotedSecondsAfterCommit: number } };
    expect(d.canary.promotedSecondsAfterCommit).toBeGreaterThanOrEqual(119);
  });

  it('a Rollout the console cannot see: unknown, never verified', async () => {
    const { ctx, states } = context();
    live = undefined;
    await recordVerification(ctx, app, rel(), true);
    expect(states[0]?.data).toMatchObject({
      status: 'unknown',
      reason: expect.stringContaining('Rollout staging/checkout not seen by the console') as unknown,
    });
  });
});
