// The calendar's weeks and what of an entry falls on a day, in the reader's zone (local Date constructors here, so
// the test holds in any zone the machine has).
import { describe, expect, it } from 'vitest';
import type { EnvCalendarEntry } from '../../../../api/schemas.ts';
import { calendarRange, calendarWeeks, dayKey, entriesOn, timeOnDay } from './calendar-grid.ts';

const local = (d: number, h = 0, m = 0) => new Date(2026, 11, d, h, m).getTime(); // December 2026
const iso = (t: number) => new Date(t).toISOString();
const window = (from: number, until: number): EnvCalendarEntry => ({
  type: 'window',
  name: 'w',
  reason: 'r',
  from: iso(from),
  until: iso(until),
  apps: [],
});

describe('calendar weeks', () => {
  it('run Monday to Sunday from the week a week back to the week holding the 30th day ahead', () => {
    const weeks = calendarWeeks(local(9, 15)); // Wednesday 9 December
    expect(weeks[0]![0]!.key).toBe('2026-11-30'); // the Monday of the week of 2 December
    expect(weeks.at(-1)!.at(-1)!.key).toBe('2027-01-10'); // the Sunday of the week of 8 January
    expect(weeks.every((w) => w.length === 7)).toBe(true);
    expect(weeks.flat().some((d) => d.key === dayKey(local(9, 15)))).toBe(true);
    expect(calendarRange(weeks)).toEqual({ from: iso(new Date(2026, 10, 30).getTime()), days: 42 });
  });

  it('a page moves by four weeks', () => {
    const now = local(9, 15);
    expect(calendarWeeks(now, 1)[0]![0]!.key).toBe('2026-12-28');
    expect(calendarWeeks(now, -1)[0]![0]!.key).toBe('2026-11-02');
  });
});

describe('an entry on a day', () => {
  const day = calendarWeeks(local(9, 12))
    .flat()
    .find((d) => d.key === '2026-12-09')!;
  it('says all day, from, until, or both ends', () => {
    expect(timeOnDay(day, window(local(8, 10), local(10, 10)))).toBe('all day');
    expect(timeOnDay(day, window(local(9, 16), local(10, 2)))).toBe('from 16:00');
    expect(timeOnDay(day, window(local(8, 22), local(9, 6)))).toBe('until 06:00');
    expect(timeOnDay(day, window(local(9, 16), local(9, 23, 30)))).toBe('16:00–23:30');
    expect(timeOnDay(day, { type: 'release', app: 'a', sha: 's', at: iso(local(9, 14, 2)), failed: false })).toBe(
      '14:02',
    );
  });
  it('lists the stretches overlapping the day and the releases in it, not one ending at its start', () => {
    const ends = window(local(8, 22), local(9, 0));
    const inside = window(local(9, 1), local(9, 2));
    const rel: EnvCalendarEntry = { type: 'release', app: 'a', sha: 's', at: iso(local(10, 0)), failed: false };
    expect(entriesOn(day, [ends, inside, rel])).toEqual([inside]);
  });
});
