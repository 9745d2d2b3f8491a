// The release's health state: a Degraded moment right after a rollout (an HPA waiting for its new Pods' first
// metrics) is not the release's health; Degraded that lasts is.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { App } from '../../domain/app.ts';
import { recordHealth } from './record-reconcile.ts';
import { UNHEALTHY_CONFIRM_MS, type StateContext, type Tracked } from './tracking.ts';

const app = (health: App['health'], healthMessage = '') =>
  ({ id: 'nonprod/flux-system/kustomization/digital-human-dev', health, healthMessage }) as App;

function setup() {
  const emitted: Array<{ state: string; data: Record<string, unknown> }> = [];
  const ctx: StateContext = {
    o: {} as StateContext['o'],
    emit: (_a, _r, state, _actor, data) => void emitted.push({ state, data }),
    emitOther: () => undefined,
  };
  const rel: Tracked = {
    sha: 'a'.repeat(40),
    revision: `main@sha1:${'a'.repeat(40)}`,
    seenAt: Date.now(),
    recorded: new Map([['reconcile', { status: 'ok' } as never]]),
    reconciledAt: Date.now(),
  };
  return { ctx, rel, emitted };
}

describe('recordHealth', () => {
  beforeEach(() => vi.useFakeTimers({ now: Date.parse('2026-12-01T10:00:00Z') }));
  afterEach(() => vi.useRealTimers());

  it('a Degraded moment after the rollout, then Healthy: the release is Healthy', () => {
    const { ctx, rel, emitted } = setup();
    const hpa = 'HorizontalPodAutoscaler dev/render-worker: scaling inactive: no metrics returned';
    vi.advanceTimersByTime(5_000);
    recordHealth(ctx, app('Degraded', hpa), rel, false);
    vi.advanceTimersByTime(UNHEALTHY_CONFIRM_MS / 2);
    recordHealth(ctx, app('Degraded', hpa), rel, false);
    expect(emitted).toEqual([]);
    vi.advanceTimersByTime(3_000);
    recordHealth(ctx, app('Healthy'), rel, false);
    expect(emitted).toHaveLength(1);
    expect(emitted[0]?.data).toMatchObject({ health: 'Healthy' });
    expect(emitted[0]?.data.status).toBeUndefined();
  });

  it('Degraded that lasts is the release health: failed, with the reason', () => {
    const { ctx, rel, emitted } = setup();
    vi.advanceTimersByTime(5_000);
    recordHealth(ctx, app('Degraded', 'Deployment dev/api: 0 of 3 available'), rel, false);
    vi.advanceTimersByTime(UNHEALTHY_CONFIRM_MS - 1_000);
    recordHealth(ctx, app('Degraded', 'Deployment dev/api: 0 of 3 available'), rel, false);
    expect(emitted).toEqual([]);
    vi.advanceTimersByTime(2_000);
    recordHealth(ctx, app('Degraded', 'Deployment dev/api: 0 of 3 available'), rel, false);
    expect(emitted.map((e) => e.data)).toEqual([
      expect.objectContaining({
        health: 'Degraded',
        status: 'failed',
        reason: 'Degraded: Deployment dev/api: 0 of 3 available',
      }),
    ]);
  });

  it('a moment of Progressing in between starts the wait again', () => {
    const { ctx, rel, emitted } = setup();
    vi.advanceTimersByTime(5_000);
    recordHealth(ctx, app('Degraded', 'x'), rel, false);
    vi.advanceTimersByTime(UNHEALTHY_CONFIRM_MS - 1_000);
    recordHealth(ctx, app('Progressing', 'rolling'), rel, false);
    vi.advanceTimersByTime(2_000);
    recordHealth(ctx, app('Degraded', 'x'), rel, false);
    expect(emitted).toEqual([]);
    vi.advanceTimersByTime(UNHEALTHY_CONFIRM_MS);
    recordHealth(ctx, app('Degraded', 'x'), rel, false);
    expect(emitted.map((e) => e.data.status)).toEqual(['failed']);
  });
});
