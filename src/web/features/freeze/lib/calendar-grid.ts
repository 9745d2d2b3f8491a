// The calendar's weeks (issue 43), in the reader's own time zone: Monday-first weeks from the week before this
// one to the week holding the 30th day ahead, shifted by whole 4-week pages; and what of each entry falls on a day
// ("all day", "from 16:00", "until 06:00", "16:00–23:00"). Pure: the component renders it.
import type { EnvCalendarEntry } from '../../../../api/schemas.ts';

const DAY = 86_400_000;

export interface CalendarDay {
  /** local date, YYYY-MM-DD */
  key: string;
  start: number;
  end: number;
}

const pad = (n: number) => String(n).padStart(2, '0');
const keyOf = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
/** The local date of an instant, YYYY-MM-DD. */
export const dayKey = (t: number) => keyOf(new Date(t));
const midnight = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate());
const addDays = (d: Date, n: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + n);

/** Monday-first weeks: from the week a week before `now` (plus `page` × 4 weeks) to the week 30 days ahead. */
export function calendarWeeks(now: number, page = 0): CalendarDay[][] {
  const today = midnight(new Date(now));
  const back = addDays(today, -7 + page * 28);
  const first = addDays(back, -((back.getDay() + 6) % 7));
  const ahead = addDays(today, 30 + page * 28);
  const weeks: CalendarDay[][] = [];
  for (let w = first; w <= ahead; w = addDays(w, 7))
    weeks.push(
      Array.from({ length: 7 }, (_, i) => {
        const d = addDays(w, i);
        return { key: keyOf(d), start: d.getTime(), end: addDays(d, 1).getTime() };
      }),
    );
  return weeks;
}

/** The range to ask for: the first day's start and the whole days to the last day's end (DST days are 23–25 h). */
export function calendarRange(weeks: CalendarDay[][]): { from: string; days: number } {
  const first = weeks[0]?.[0];
  const last = weeks.at(-1)?.at(-1);
  if (!first || !last) return { from: new Date(0).toISOString(), days: 1 };
  return { from: new Date(first.start).toISOString(), days: Math.min(62, Math.ceil((last.end - first.start) / DAY)) };
}

export const entryStart = (e: EnvCalendarEntry) => Date.parse(e.type === 'release' ? e.at : e.from);
export const entryEnd = (e: EnvCalendarEntry) => (e.type === 'release' ? Date.parse(e.at) + 1 : Date.parse(e.until));

/** The entries on a day (a stretch overlapping it, a release in it), in time order. */
export function entriesOn(day: CalendarDay, entries: readonly EnvCalendarEntry[]): EnvCalendarEntry[] {
  return entries.filter((e) => entryStart(e) < day.end && entryEnd(e) > day.start);
}

const hm = (t: number) => {
  const d = new Date(t);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
};

/** What of a stretch falls on the day: "all day", "from 16:00", "until 06:00" or "16:00–23:00"; a release "14:02". */
export function timeOnDay(day: CalendarDay, e: EnvCalendarEntry): string {
  if (e.type === 'release') return hm(Date.parse(e.at));
  const a = Date.parse(e.from);
  const b = Date.parse(e.until);
  const starts = a > day.start;
  const ends = b < day.end;
  if (!starts && !ends) return 'all day';
  if (starts && !ends) return `from ${hm(a)}`;
  if (!starts) return `until ${hm(b)}`;
  return `${hm(a)}–${hm(b)}`;
}
