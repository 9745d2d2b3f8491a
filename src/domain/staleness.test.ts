import { describe, expect, it } from 'vitest';
import { staleness } from './staleness.ts';

const T = '2026-12-06T10:00:00.000Z';
const U = '2026-12-06T10:05:00.000Z';

describe('staleness', () => {
  it('a connected cluster, an unknown one and a first connection are not stale', () => {
    expect(staleness({ status: 'connected', since: T })).toEqual({ stale: false });
    expect(staleness(undefined)).toEqual({ stale: false });
    expect(staleness({ status: 'connecting', since: T })).toEqual({ stale: false });
  });

  it('unreachable is stale since its last good data, with the reason', () => {
    expect(staleness({ status: 'unreachable', since: U, staleSince: T, reason: 'connect ECONNREFUSED' })).toEqual({
      stale: true,
      since: T,
      reason: 'connect ECONNREFUSED',
    });
    expect(staleness({ status: 'unreachable', since: U })).toEqual({ stale: true, since: U, reason: 'no answer' });
  });

  it('reconnecting after an outage stays stale until connected', () => {
    expect(staleness({ status: 'connecting', since: U, staleSince: T })).toEqual({
      stale: true,
      since: T,
      reason: 'reconnecting',
    });
  });
});
