// An environment's calendar (issue 43): Monday-first weeks from last week to 30 days ahead, in the reader's zone,
// each day listing what holds deploys (planned freeze windows, Argo CD deny windows and allow windows, freezes) and
// the releases that became live. Earlier and later pages move by four weeks. A source the BFF could not read is
// said (role=alert), never drawn as an empty day.
import { useState } from 'react';
import { Link } from 'react-router';
import type { EnvCalendarEntry } from '../../../../api/schemas.ts';
import { useNow } from '../../../lib/use-now.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { useEnvCalendar } from '../api/calendar-queries.ts';
import { calendarRange, calendarWeeks, dayKey, entriesOn, timeOnDay, type CalendarDay } from '../lib/calendar-grid.ts';

/** entries shown per day before "+N more" (a button that shows them all) */
const PER_DAY = 6;
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

const STYLE: Record<string, string> = {
  window: 'border-violet-300 bg-violet-50 text-violet-900',
  deny: 'border-red-300 bg-red-50 text-red-900',
  allow: 'border-emerald-300 bg-emerald-50 text-emerald-900',
  freeze: 'border-sky-300 bg-sky-50 text-sky-900',
  release: 'border-slate-300 bg-white text-slate-800',
  failed: 'border-red-400 bg-white text-red-800',
};

const short = (id: string) => id.split('/').at(-1) ?? id;
const apps = (ids: string[]) => (ids.length === 1 ? short(ids[0]!) : `${ids.length} apps`);

function describe(e: EnvCalendarEntry): { text: string; title: string; style: string; to?: string } {
  switch (e.type) {
    case 'window':
      return {
        text: `Window ${e.name}`,
        title: `Planned freeze window ${e.name}: ${e.reason} (${apps(e.apps)})`,
        style: STYLE.window!,
        to: '/freezes',
      };
    case 'sync-window':
      return {
        text: `Argo CD ${e.kind} ${e.label}`,
        title: `Argo CD ${e.kind} window of project ${e.project} on ${e.cluster}: ${e.schedule} for ${e.duration}${e.timeZone ? ` (${e.timeZone})` : ''}${e.manualSync ? ', manual syncs allowed' : ''} — ${apps(e.apps)}`,
        style: STYLE[e.kind]!,
      };
    case 'freeze':
      return {
        text: e.window ? `Frozen (window ${e.window})` : `Frozen by ${e.createdBy}`,
        title: `Freeze of ${apps(e.apps)}: ${e.reason}${e.active ? ' (holding now)' : ''}`,
        style: STYLE.freeze!,
        to: `/freezes/${encodeURIComponent(e.id)}`,
      };
    case 'release':
      return {
        text: `${short(e.app)} ${e.sha.slice(0, 7)}${e.failed ? ' (failed)' : ''}`,
        title: `Release ${e.sha.slice(0, 12)} of ${e.app} became live${e.failed ? '; it counts as a failure' : ''}`,
        style: e.failed ? STYLE.failed! : STYLE.release!,
        to: `/apps/${e.app}`,
      };
  }
}

function Entry({ day, e }: { day: CalendarDay; e: EnvCalendarEntry }) {
  const d = describe(e);
  const body = (
    <>
      <span className="tabular-nums">{timeOnDay(day, e)}</span> {d.text}
    </>
  );
  return (
    <li
      className={`rounded border px-1 py-0.5 text-xs wrap-anywhere ${d.style}`}
      title={d.title}
      data-testid="cal-entry"
      data-type={e.type === 'sync-window' ? `sync-${e.kind}` : e.type}
    >
      {d.to ? (
        <Link to={d.to} className="underline-offset-2 hover:underline">
          {body}
        </Link>
      ) : (
        body
      )}
      <span className="sr-only">. {d.title}</span>
    </li>
  );
}

function Day({ day, entries, today }: { day: CalendarDay; entries: EnvCalendarEntry[]; today: boolean }) {
  const on = entriesOn(day, entries);
  const [open, setOpen] = useState(false);
  const date = new Date(day.start);
  return (
    <td
      className={`h-24 border border-slate-200 p-1 align-top ${today ? 'bg-teal-50' : ''}`}
      data-testid="cal-day"
      data-day={day.key}
      {...(today ? { 'aria-current': 'date' as const } : {})}
    >
      <div className={`text-xs ${today ? 'font-semibold text-teal-800' : 'text-slate-600'}`}>
        {date.getDate() === 1 || today
          ? date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short' })
          : date.getDate()}
      </div>
      {on.length > 0 && (
        <ul className="mt-1 grid gap-0.5">
          {(open ? on : on.slice(0, PER_DAY)).map((e, i) => (
            <Entry key={i} day={day} e={e} />
          ))}
          {on.length > PER_DAY && (
            <li>
              <button
                type="button"
                className="text-xs text-teal-700 underline"
                aria-expanded={open}
                data-testid="cal-more"
                onClick={() => setOpen(!open)}
              >
                {open ? 'fewer' : `+${on.length - PER_DAY} more`}
              </button>
            </li>
          )}
        </ul>
      )}
    </td>
  );
}

export function EnvCalendar({ env }: { env: string }) {
  const now = useNow(60_000);
  const [page, setPage] = useState(0);
  const weeks = calendarWeeks(now, page);
  const { from, days } = calendarRange(weeks);
  const perm = usePermission('app.read', { env });
  const q = useEnvCalendar(env, from, days, perm.allowed);
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const todayKey = dayKey(now);
  const first = weeks[0]?.[0];
  const last = weeks.at(-1)?.at(-1);
  const label = (d: CalendarDay | undefined) =>
    d ? new Date(d.start).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' }) : '';
  return (
    <section
      className="rounded border border-slate-200 bg-white p-4"
      aria-labelledby="cal-h"
      data-testid="env-calendar"
    >
      <header className="flex flex-wrap items-end gap-2">
        <div>
          <h2 id="cal-h" className="font-semibold">
            Calendar
          </h2>
          <p className="text-sm text-slate-600">
            What holds deploys to {env} and what was deployed, {label(first)} – {label(last)}, times in {zone}.
          </p>
        </div>
        <div className="ml-auto flex gap-1 text-sm" role="group" aria-label="Calendar pages">
          <button type="button" className="rounded border border-slate-300 px-2 py-1" onClick={() => setPage(page - 1)}>
            Earlier
          </button>
          <button
            type="button"
            className="rounded border border-slate-300 px-2 py-1 disabled:opacity-50"
            disabled={page === 0}
            onClick={() => setPage(0)}
          >
            Today
          </button>
          <button type="button" className="rounded border border-slate-300 px-2 py-1" onClick={() => setPage(page + 1)}>
            Later
          </button>
        </div>
      </header>
      <ul className="mt-2 flex flex-wrap gap-2 text-xs" aria-label="Legend">
        <li className={`rounded border px-1 ${STYLE.window}`}>planned freeze window</li>
        <li className={`rounded border px-1 ${STYLE.deny}`}>Argo CD deny window</li>
        <li className={`rounded border px-1 ${STYLE.allow}`}>Argo CD allow window (outside it: no automated sync)</li>
        <li className={`rounded border px-1 ${STYLE.freeze}`}>freeze</li>
        <li className={`rounded border px-1 ${STYLE.release}`}>release became live</li>
      </ul>
      {!perm.allowed && <p className="mt-2 text-sm text-slate-600">{perm.reason}.</p>}
      {perm.allowed && q.isPending && <p className="mt-2 text-slate-500">Loading…</p>}
      {q.isError && (
        <p className="mt-2 rounded border border-red-200 bg-red-50 p-3 text-red-800" role="alert">
          Cannot load the calendar of {env}: {q.error.message}
        </p>
      )}
      {q.data && q.data.unknown.length > 0 && (
        <div className="mt-2 rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900" role="alert">
          Part of the calendar is unknown:
          <ul className="list-disc pl-5" data-testid="cal-unknown">
            {q.data.unknown.map((u, i) => (
              <li key={i}>
                {u.source}: {u.why}
              </li>
            ))}
          </ul>
        </div>
      )}
      {q.data?.truncated && (
        <p className="mt-2 text-sm text-amber-900" role="status">
          Some lists were cut at their cap: a busy day may show fewer entries than it had.
        </p>
      )}
      {q.data && (
        <table className="mt-2 w-full table-fixed border-collapse" aria-label={`Calendar of ${env}`}>
          <thead>
            <tr>
              {WEEKDAYS.map((d) => (
                <th key={d} scope="col" className="py-1 text-xs font-medium text-slate-600">
                  {d}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {weeks.map((w) => (
              <tr key={w[0]!.key}>
                {w.map((d) => (
                  <Day key={d.key} day={d} entries={q.data.entries} today={d.key === todayKey} />
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
