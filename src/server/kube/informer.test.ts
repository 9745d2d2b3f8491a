import { describe, expect, it } from 'vitest';
import { backoffMs, resourcePath } from './informer.ts';

describe('backoffMs', () => {
  it('grows exponentially with equal jitter and stays under the cap', () => {
    expect(backoffMs(0, 500, 30_000, () => 0)).toBe(250);
    expect(backoffMs(0, 500, 30_000, () => 1)).toBe(500);
    expect(backoffMs(3, 500, 30_000, () => 0.5)).toBe(3000);
    for (let a = 0; a < 40; a++) {
      const v = backoffMs(a, 500, 30_000, Math.random);
      expect(v).toBeGreaterThanOrEqual(Math.min(30_000, 500 * 2 ** a) / 2);
      expect(v).toBeLessThanOrEqual(30_000);
    }
  });
});

describe('resourcePath', () => {
  it('builds core and group paths', () => {
    expect(resourcePath({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true })).toBe(
      '/api/v1/pods',
    );
    expect(
      resourcePath(
        { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
        'dev',
      ),
    ).toBe('/apis/apps/v1/namespaces/dev/deployments');
  });
});
