// A Flagger Canary's health and view, and the gate a governed action opens.
import { describe, expect, it } from 'vitest';
import { flaggerCanaryHealth, flaggerCanaryView, gateOf } from './flagger.ts';

const canary = (phase: string | undefined, webhooks: Array<Record<string, string>> = []) => ({
  metadata: { namespace: 'staging', name: 'payments' },
  spec: {
    provider: 'kubernetes',
    targetRef: { name: 'payments' },
    analysis: { iterations: 3, threshold: 2, webhooks },
  },
  ...(phase ? { status: { phase, iterations: 2, failedChecks: 1, lastAppliedSpec: 'b', lastPromotedSpec: 'a' } } : {}),
});

describe('flaggerCanaryHealth', () => {
  it.each([
    ['Initialized', 'Healthy'],
    ['Succeeded', 'Healthy'],
    ['Failed', 'Degraded'],
    ['WaitingPromotion', 'Suspended'],
    ['Waiting', 'Suspended'],
    ['Progressing', 'Progressing'],
    ['Promoting', 'Progressing'],
    ['Finalising', 'Progressing'],
    [undefined, 'Progressing'],
  ])('%s is %s', (phase, health) => {
    expect(flaggerCanaryHealth(canary(phase)).status).toBe(health);
  });
});

describe('flaggerCanaryView and gateOf', () => {
  const hooks = [
    { name: 'business-check', type: 'rollout', url: 'http://127.0.0.1:1234/payments' },
    { name: 'promotion-gate', type: 'confirm-promotion', url: 'http://127.0.0.1:1234/gate/check' },
    { name: 'rollback-switch', type: 'rollback', url: 'http://127.0.0.1:1234/rollback/check' },
  ];
  it('reads iterations, checks, revisions and the primary', () => {
    const v = flaggerCanaryView(canary('WaitingPromotion', hooks));
    expect(v).toMatchObject({
      primary: 'payments-primary',
      iteration: 2,
      iterations: 3,
      failedChecks: 1,
      threshold: 2,
      lastAppliedSpec: 'b',
      lastPromotedSpec: 'a',
      waitingForPromotion: true,
    });
  });
  it('promote opens the confirm-promotion gate, rollback the rollback gate', () => {
    const v = flaggerCanaryView(canary('Progressing', hooks));
    expect(gateOf(v, 'promote')).toEqual({ url: 'http://127.0.0.1:1234/gate/open', webhook: 'promotion-gate' });
    expect(gateOf(v, 'rollback')).toEqual({ url: 'http://127.0.0.1:1234/rollback/open', webhook: 'rollback-switch' });
  });
  it('no such webhook, or one that is not a load tester gate: why', () => {
    expect(gateOf(flaggerCanaryView(canary('Progressing')), 'promote')).toEqual({
      why: 'Canary staging/payments has no confirm-promotion webhook: Flagger needs no approval to promote',
    });
    const odd = flaggerCanaryView(
      canary('Progressing', [{ name: 'g', type: 'confirm-promotion', url: 'http://x/approve' }]),
    );
    expect(gateOf(odd, 'promote')).toEqual({
      why: 'the confirm-promotion webhook g (http://x/approve) is not a Flagger load tester gate (…/gate/check)',
    });
  });
});
