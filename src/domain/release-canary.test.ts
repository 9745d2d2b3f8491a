// The canary as a release's verification: an aborted Rollout fails it with what the analysis measured, a promoted
// one verifies it, anything else keeps it pending; Flagger's Canary the same way from its phase and revisions.
import { describe, expect, it } from 'vitest';
import {
  canaryKey,
  canaryOutcome,
  canaryVerdict,
  flaggerOutcome,
  measuredReason,
  summarizeAnalysis,
} from './release-canary.ts';

const steps = [
  { setWeight: 20 },
  { pause: { duration: '30s' } },
  { analysis: { templates: [{ templateName: 'bc' }] } },
];
const rollout = (status: Record<string, unknown>) => ({
  metadata: { namespace: 'staging', name: 'checkout', generation: 4 },
  spec: { replicas: 5, strategy: { canary: { steps } } },
  status: { observedGeneration: '4', ...status },
});
const run = (name: string, hash: string, phase: string, measurement: Record<string, unknown>) => ({
  metadata: {
    name,
    creationTimestamp: `2026-12-02T03:0${name.slice(-1)}:00Z`,
    // the controller labels a step's run with its step index
    labels: { 'rollouts-pod-template-hash': hash, 'step-index': '2' },
  },
  status: {
    phase,
    metricResults: [
      { name: 'business-endpoint', phase, failed: phase === 'Failed' ? 1 : 0, measurements: [measurement] },
    ],
  },
});

describe('canaryOutcome (Argo Rollouts)', () => {
  it('aborted by a failed analysis: failed with the measured value of this canary’s run', () => {
    const o = canaryOutcome(
      rollout({
        phase: 'Degraded',
        abort: true,
        currentStepIndex: 2,
        stableRS: 'old',
        currentPodHash: 'new',
        message: 'RolloutAborted',
      }),
      [
        run('r-1', 'older', 'Failed', { phase: 'Failed', message: 'an earlier canary' }),
        run('r-2', 'new', 'Error', { phase: 'Error', message: 'received non 2xx response code: 503' }),
      ],
    );
    expect(o.state).toBe('aborted');
    expect(o.analyses.map((a) => a.name)).toEqual(['r-2']);
    expect(o.reason).toBe(
      'canary staging/checkout aborted at step 3 of 3: analysis r-2 business-endpoint error: received non 2xx response code: 503',
    );
    expect(canaryVerdict([o])).toEqual({ status: 'failed', reason: o.reason });
  });

  it('aborted by hand (no failed run): says so, at the furthest step seen (an abort resets the step to 0)', () => {
    const aborted = rollout({
      phase: 'Degraded',
      abort: true,
      currentStepIndex: 0,
      stableRS: 'a',
      currentPodHash: 'b',
    });
    expect(canaryOutcome(aborted, [], { iteration: 1 }).reason).toMatch(
      /aborted at step 2 of 3: aborted \(no analysis failed: by hand\?\)/,
    );
    // where it was is not known: not guessed
    expect(canaryOutcome(aborted, []).reason).toBe(
      'canary staging/checkout aborted: aborted (no analysis failed: by hand?)',
    );
  });

  it('promoted: stable is the current pod template and the spec was observed', () => {
    const o = canaryOutcome(
      rollout({ phase: 'Healthy', currentStepIndex: 3, stableRS: 'new', currentPodHash: 'new' }),
      [],
    );
    expect(o.state).toBe('promoted');
    expect(o.weight).toBe(100);
    expect(canaryVerdict([o])?.status).toBe('ok');
  });

  it('a spec not yet observed is progressing, even if the old status says Healthy', () => {
    const r = rollout({ phase: 'Healthy', stableRS: 'x', currentPodHash: 'x' });
    (r.status as Record<string, unknown>).observedGeneration = '3';
    expect(canaryOutcome(r, []).state).toBe('progressing');
  });

  it('paused on a step: progressing with the step, weight and pause', () => {
    const o = canaryOutcome(
      rollout({
        phase: 'Paused',
        currentStepIndex: 1,
        stableRS: 'a',
        currentPodHash: 'b',
        pauseConditions: [{ reason: 'CanaryPauseStep' }],
      }),
      [],
    );
    expect(o.state).toBe('progressing');
    expect(o.reason).toBe('canary staging/checkout at 20 %, step 2 of 3 (pause 30s), paused: CanaryPauseStep');
    expect(canaryVerdict([o])?.status).toBe('pending');
  });

  it('the key changes with the step, so each step is recorded once', () => {
    const a = canaryOutcome(rollout({ phase: 'Paused', currentStepIndex: 1, stableRS: 'a', currentPodHash: 'b' }), []);
    const b = canaryOutcome(
      rollout({ phase: 'Progressing', currentStepIndex: 2, stableRS: 'a', currentPodHash: 'b' }),
      [],
    );
    expect(canaryKey(a)).toBe(canaryKey({ ...a }));
    expect(canaryKey(a)).not.toBe(canaryKey(b));
  });
});

describe('analysis summaries', () => {
  it('keep the last five measurements and cut long messages', () => {
    const ms = Array.from({ length: 8 }, (_, i) => ({ phase: 'Successful', value: String(i), finishedAt: `t${i}` }));
    const s = summarizeAnalysis({
      metadata: { name: 'r' },
      status: {
        phase: 'Running',
        message: 'x'.repeat(400),
        metricResults: [{ name: 'm', phase: 'Running', measurements: ms }],
      },
    });
    expect(s.metrics[0]?.measurements.map((m) => m.value)).toEqual(['3', '4', '5', '6', '7']);
    expect(s.message).toHaveLength(300);
  });
  it('a failed metric measured a value: the reason names it', () => {
    const s = summarizeAnalysis({
      metadata: { name: 'r' },
      status: {
        phase: 'Failed',
        metricResults: [{ name: 'latency', phase: 'Failed', measurements: [{ phase: 'Failed', value: '[0.93]' }] }],
      },
    });
    expect(measuredReason(s)).toBe('latency failed: measured [0.93]');
  });
});

const canary = (status: Record<string, unknown>) => ({
  metadata: { namespace: 'staging', name: 'payments' },
  spec: { targetRef: { name: 'payments' }, analysis: { iterations: 3, threshold: 2 } },
  status,
});

describe('flaggerOutcome', () => {
  it('Failed: rolled back, with the failed checks and the condition', () => {
    const o = flaggerOutcome(
      canary({
        phase: 'Failed',
        iterations: 1,
        failedChecks: 2,
        lastAppliedSpec: 'b',
        lastPromotedSpec: 'a',
        conditions: [{ type: 'Promoted', message: 'Canary analysis failed, Deployment scaled to zero.' }],
      }),
    );
    expect(o.state).toBe('aborted');
    expect(o.reason).toBe(
      'canary staging/payments rolled back at iteration 1 of 3 after 2 failed check(s) of 2 allowed: Canary analysis failed, Deployment scaled to zero.',
    );
  });
  it('Succeeded with the analysed revision promoted: promoted', () => {
    expect(flaggerOutcome(canary({ phase: 'Succeeded', lastAppliedSpec: 'b', lastPromotedSpec: 'b' })).state).toBe(
      'promoted',
    );
  });
  it('Succeeded, but the target runs images its primary does not: Flagger has not picked the revision up yet', () => {
    const dep = (image: string) => ({ spec: { template: { spec: { containers: [{ name: 'payments', image }] } } } });
    const st = { phase: 'Succeeded', lastAppliedSpec: 'b', lastPromotedSpec: 'b' };
    const o = flaggerOutcome(canary(st), undefined, { target: dep('pay:2'), primary: dep('pay:1') });
    expect(o.state).toBe('progressing');
    expect(o.reason).toMatch(/runs a revision Flagger has not promoted yet/);
    expect(flaggerOutcome(canary(st), undefined, { target: dep('pay:2'), primary: dep('pay:2') }).state).toBe(
      'promoted',
    );
    // a workload the console cannot see: not promoted
    expect(flaggerOutcome(canary(st), undefined, { primary: dep('pay:2') }).state).toBe('progressing');
  });
  it('Succeeded while a newer revision is applied: still progressing', () => {
    expect(flaggerOutcome(canary({ phase: 'Succeeded', lastAppliedSpec: 'c', lastPromotedSpec: 'b' })).state).toBe(
      'progressing',
    );
  });
  it('waiting for its promotion gate: progressing, and says what it waits for', () => {
    const o = flaggerOutcome(
      canary({ phase: 'WaitingPromotion', iterations: 3, lastAppliedSpec: 'c', lastPromotedSpec: 'b' }),
    );
    expect(o.state).toBe('progressing');
    expect(o.reason).toMatch(/iteration 3 of 3, 0 failed check\(s\) of 2 allowed: waiting for the promotion gate/);
  });
  it('no canaries: no verdict (the HTTP check alone verifies)', () => {
    expect(canaryVerdict([])).toBeUndefined();
  });
});
