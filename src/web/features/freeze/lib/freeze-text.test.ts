import { describe, expect, it } from 'vitest';
import { fieldErrors, readPlacements, timeLeft, valueText } from './freeze-text.ts';

describe('freeze text', () => {
  it('splits a 400 into field messages', () => {
    expect(
      fieldErrors('reason: a reason is required; minutes: a freeze lasts at most 1440 minutes (24 h); oops'),
    ).toEqual({
      fields: { reason: 'a reason is required', minutes: 'a freeze lasts at most 1440 minutes (24 h)' },
      other: ['oops'],
    });
  });

  it('counts the time left down to expired', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    expect(timeLeft('2026-12-01T11:52:30Z', now)).toBe('1 h 52 min');
    expect(timeLeft('2026-12-01T10:09:05Z', now)).toBe('9 min 5 s');
    expect(timeLeft('2026-12-01T10:00:40Z', now)).toBe('40 s');
    expect(timeLeft('2026-12-01T09:59:00Z', now)).toBe('expired');
  });

  it('shows values and placements', () => {
    expect(valueText(12)).toBe('12');
    expect(valueText(undefined)).toBe('(absent)');
    expect(valueText({ a: 1 })).toBe('{"a":1}');
    expect(
      readPlacements([
        { changeId: 'a', placed: true, file: 'f.yaml', how: 'patch' },
        { changeId: 'b', placed: false, reason: 'r', yaml: 'x: 1' },
        { changeId: 'c', placed: true, file: 'o/p.yaml', how: 'new-patch', note: 'set in ../shared/cm.yaml' },
        { changeId: 'd', placed: true, file: 'o/q.yaml', note: 7 },
      ]),
    ).toEqual([
      { changeId: 'a', placed: true, file: 'f.yaml', how: 'patch' },
      { changeId: 'b', placed: false, reason: 'r', yaml: 'x: 1' },
      { changeId: 'c', placed: true, file: 'o/p.yaml', how: 'new-patch', note: 'set in ../shared/cm.yaml' },
      { changeId: 'd', placed: true, file: 'o/q.yaml' },
    ]);
  });
});
