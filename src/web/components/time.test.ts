import { describe, expect, it } from 'vitest';
import { formatLocal, formatLocalTime, formatUtc } from './time.tsx';

describe('times', () => {
  const iso = '2025-12-01T08:47:12Z';
  it.each([
    ['Europe/Berlin', '2025-12-01 09:47:12 CET'],
    ['UTC', '2025-12-01 08:47:12 UTC'],
    ['America/New_York', '2025-12-01 03:47:12 GMT-5'],
  ])('in %s: local date, time and zone', (tz, want) => {
    expect(formatLocal(iso, tz)).toBe(want);
  });
  it('time of day only, UTC for the tooltip, nothing for a missing time', () => {
    expect(formatLocalTime(iso, 'Europe/Berlin')).toBe('09:47:12 CET');
    expect(formatUtc(iso)).toBe('2025-12-01 08:47:12 UTC');
    expect(formatLocal(undefined)).toBe('');
    expect(formatLocal('not a time')).toBe('');
  });
});
