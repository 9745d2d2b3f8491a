import { describe, expect, it } from 'vitest';
import { assessHealth } from './health.ts';
import { analysisRunHealth, latestAnalysis, rolloutHealth, rolloutView } from './rollout.ts';

const steps = [
  { setWeight: 20 },
  { pause: { duration: '30s' } },
  { analysis: { templates: [{ templateName: 'business-check-staging', clusterScope: true }] } },
  { setWeight: 50 },
  { pause: {} },
];
const rollout = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Rollout',
  metadata: { name: 'checkout', namespace: 'staging', generation: 3 },
  spec: { replicas: 5, strategy: { canary: { steps } }, ...spec },
  status: { observedGeneration: '3', ...status },
});

describe('a Rollout as Argo CD and a person read it', () => {
  it('health: the controller’s phase, Paused as Suspended; an unobserved spec is Progressing', () => {
    expect(assessHealth(rollout({ phase: 'Healthy' })).status).toBe('Healthy');
    expect(rolloutHealth(rollout({ phase: 'Paused', message: 'CanaryPauseStep' }))).toEqual({
      status: 'Suspended',
      message: 'CanaryPauseStep',
    });
    expect(
      rolloutHealth(rollout({ phase: 'Degraded', message: 'RolloutAborted: Rollout aborted update to revision 2' }))
        .status,
    ).toBe('Degraded');
    expect(rolloutHealth(rollout({ observedGeneration: '2', phase: 'Healthy' })).status).toBe('Progressing');
    // no phase (an older controller): the conditions and replicas decide
    expect(
      rolloutHealth(
        rollout({
          observedGeneration: '3',
          currentPodHash: 'b',
          stableRS: 'a',
          updatedReplicas: 5,
          availableReplicas: 5,
          replicas: 5,
        }),
      ),
    ).toEqual({ status: 'Progressing', message: 'Waiting for rollout to finish steps' });
  });

  it('an AnalysisRun: Failed and Error are Degraded with the run’s message', () => {
    expect(
      analysisRunHealth({ status: { phase: 'Failed', message: 'Metric "business-endpoint" assessed Failed' } }),
    ).toEqual({
      status: 'Degraded',
      message: 'Metric "business-endpoint" assessed Failed',
    });
    expect(analysisRunHealth({ status: { phase: 'Running' } }).status).toBe('Progressing');
    expect(
      assessHealth({ apiVersion: 'argoproj.io/v1alpha1', kind: 'AnalysisRun', status: { phase: 'Error' } }).status,
    ).toBe('Degraded');
  });

  it('the view: the step it is on, the weight it holds, why it is paused, stable and canary, the analysis', () => {
    const v = rolloutView(
      rollout({
        phase: 'Progressing',
        currentStepIndex: 2,
        stableRS: 'aaa',
        currentPodHash: 'bbb',
        updatedReplicas: 1,
        availableReplicas: 5,
        canary: { currentStepAnalysisRunStatus: { name: 'checkout-bbb-3-2', status: 'Running' } },
      }),
    );
    expect(v.weight).toBe(20);
    expect(v.steps.map((s) => `${s.text}:${s.state}`)).toEqual([
      'set weight 20 %:done',
      'pause 30s:done',
      'analysis business-check-staging:current',
      'set weight 50 %:pending',
      'pause until promoted:pending',
    ]);
    expect(v).toMatchObject({ stableHash: 'aaa', canaryHash: 'bbb', paused: null, aborted: false });
    expect(v.analysis).toEqual({ name: 'checkout-bbb-3-2', status: 'Running', message: null });
    const paused = rolloutView(
      rollout({
        phase: 'Paused',
        currentStepIndex: 4,
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-12-02T00:00:00Z' }],
      }),
    );
    expect(paused.weight).toBe(50);
    expect(paused.paused).toEqual({ reasons: ['CanaryPauseStep'], since: '2026-12-02T00:00:00Z' });
    const done = rolloutView(
      rollout({ phase: 'Healthy', currentStepIndex: 5, stableRS: 'bbb', currentPodHash: 'bbb' }),
    );
    expect(done.weight).toBe(100);
    expect(done.steps.every((s) => s.state === 'done')).toBe(true);
  });
});

describe('the newest AnalysisRun of a canary', () => {
  it('its phase and what was measured, newest first', () => {
    const run = (name: string, at: string, status: Record<string, unknown>) => ({
      metadata: { name, creationTimestamp: at },
      status,
    });
    expect(
      latestAnalysis([
        run('checkout-a-2-2', '2026-12-02T00:00:00Z', { phase: 'Successful' }),
        run('checkout-b-3-2', '2026-12-02T01:00:00Z', {
          phase: 'Error',
          metricResults: [
            {
              name: 'business-endpoint',
              message: 'received non 2xx response code: 503',
              measurements: [{ phase: 'Error' }],
            },
          ],
        }),
      ]),
    ).toEqual({
      name: 'checkout-b-3-2',
      status: 'Error',
      message: 'business-endpoint: received non 2xx response code: 503',
    });
    expect(
      latestAnalysis([
        run('x', '2026-12-02T00:00:00Z', {
          phase: 'Successful',
          metricResults: [{ name: 'm', measurements: [{ value: 'ok' }] }],
        }),
      ])?.message,
    ).toBe('m: measured ok');
    expect(latestAnalysis([])).toBeNull();
  });
});
