import { describe, expect, it } from 'vitest';
import type { ReconcileStatusResponse } from '../../../../api/schemas.ts';
import { localClock, reconcileStatusPollMs, reconcileStatusText } from './reconcile-status-text.ts';

const base: ReconcileStatusResponse = {
  state: 'pending',
  requestedAt: '2026-12-01T23:08:10.123Z',
  reverted: [],
  timeoutMs: 60_000,
};
const utc = (iso: string) => localClock(iso, 'UTC');

describe('reconcileStatusText', () => {
  it.each<[Partial<ReconcileStatusResponse>, string, string]>([
    [{}, 'pending', 'waiting for the controller…'],
    [
      {
        state: 'reconciled',
        reconciledAt: '2026-12-01T23:08:12Z',
        revision: 'main@sha1:3f2a1c9e1111111111111111111111111111111',
        reverted: [{ object: 'nonprod/apps/Deployment/dev/tts', path: 'spec.replicas', managers: ['kubectl-scale'] }],
      },
      'ok',
      'reconciled at 23:08:12 UTC: applied 3f2a1c9, 1 field reverted',
    ],
    [{ state: 'reconciled', revision: 'abc1234def' }, 'ok', 'reconciled: applied abc1234'],
    [{ state: 'timeout' }, 'warn', 'not picked up: the controller did not answer within 60 s'],
    [
      {
        state: 'failed',
        reconciledAt: '2026-12-01T23:08:12Z',
        reason: 'BuildFailed',
        message: 'kustomize build failed',
      },
      'error',
      'reconcile failed at 23:08:12 UTC: BuildFailed: kustomize build failed',
    ],
    [
      { state: 'timeout', message: 'the controller did not pick the request up within 60 s' },
      'warn',
      'not picked up: the controller did not pick the request up within 60 s',
    ],
  ])('%j → %s %s', (s, tone, text) => {
    expect(reconcileStatusText({ ...base, ...s }, utc)).toEqual({ tone, text });
  });

  it('polls only while the controller has not answered', () => {
    expect(reconcileStatusPollMs(undefined)).toBe(1_000);
    expect(reconcileStatusPollMs(base)).toBe(1_000);
    expect(reconcileStatusPollMs({ ...base, state: 'reconciled' })).toBe(false);
  });
});
