// "Frozen" on an overview card: not colour only (an icon and the word), with the expiry, and the planned window that
// froze it when one did.
import type { AppSummary } from '../../api/schemas.ts';
import { windowOfActor } from '../../domain/window-actor.ts';
import { formatLocal, formatLocalTime } from './time.tsx';

export function FrozenBadge({ freeze }: { freeze: NonNullable<AppSummary['freeze']> }) {
  // a freeze a planned window started names the window: "frozen until Jan 3 (window holiday-freeze)"
  const window = windowOfActor(freeze.by);
  return (
    <span
      className="inline-flex items-center gap-1 rounded bg-sky-100 px-1.5 py-0.5 text-xs font-medium text-sky-900 ring-1 ring-sky-400 ring-inset"
      data-testid="frozen"
      title={`Frozen by ${freeze.by}: ${freeze.reason}`}
    >
      <span aria-hidden>❄</span>
      Frozen until {sameDay(freeze.until) ? formatLocalTime(freeze.until) : formatLocal(freeze.until)}
      {window && ` (window ${window})`}
    </span>
  );
}

/** whether the time falls on today's local date (a holiday freeze until Jan 3 shows its date) */
function sameDay(iso: string): boolean {
  const d = new Date(iso);
  return !Number.isNaN(d.getTime()) && d.toDateString() === new Date().toDateString();
}
