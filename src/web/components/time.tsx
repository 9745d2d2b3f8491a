// Times as people read them: in the user's own zone with the zone named, and UTC on hover (auditors
// compare with logs in UTC). One format everywhere: 2025-12-01 09:47:12 CET.

const parts = (iso: string, timeZone: string | undefined, withDate: boolean) => {
  const f = new Intl.DateTimeFormat('en-GB', {
    ...(withDate ? { year: 'numeric', month: '2-digit', day: '2-digit' } : {}),
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
    ...(timeZone ? { timeZone } : {}),
  } as const);
  const p: Record<string, string> = {};
  for (const x of f.formatToParts(new Date(iso))) p[x.type] = x.value;
  const time = `${p.hour}:${p.minute}:${p.second}`;
  return `${withDate ? `${p.year}-${p.month}-${p.day} ` : ''}${time} ${p.timeZoneName}`;
};

const valid = (iso: string | undefined): iso is string => !!iso && !Number.isNaN(Date.parse(iso));

/** "2025-12-01 09:47:12 CET" in the user's zone (or the given one); '' for a missing or bad time. */
export function formatLocal(iso: string | undefined, timeZone?: string): string {
  return valid(iso) ? parts(iso, timeZone, true) : '';
}

/** "09:47:12 CET": the time of day only. */
export function formatLocalTime(iso: string | undefined, timeZone?: string): string {
  return valid(iso) ? parts(iso, timeZone, false) : '';
}

/** "2025-12-01 08:47:12 UTC" */
export function formatUtc(iso: string | undefined): string {
  return valid(iso) ? parts(iso, 'UTC', true) : '';
}

/** A point in time: local with the zone, UTC in the tooltip, the exact instant in `dateTime`. */
export function Time({ iso, timeOnly = false }: { iso: string | undefined; timeOnly?: boolean }) {
  if (!valid(iso)) return <span className="text-slate-500">—</span>;
  return (
    <time dateTime={iso} title={formatUtc(iso)}>
      {timeOnly ? formatLocalTime(iso) : formatLocal(iso)}
    </time>
  );
}
