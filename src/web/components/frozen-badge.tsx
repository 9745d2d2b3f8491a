// "Frozen" on an overview card: not colour only (an icon and the word), with the expiry.
import type { AppSummary } from '../../api/schemas.ts';
import { formatLocalTime } from './time.tsx';

export function FrozenBadge({ freeze }: { freeze: NonNullable<AppSummary['freeze']> }) {
  return (
    <span
      className="inline-flex items-center gap-1 rounded bg-sky-100 px-1.5 py-0.5 text-xs font-medium text-sky-900 ring-1 ring-sky-400 ring-inset"
      data-testid="frozen"
      title={`Frozen by ${freeze.by}: ${freeze.reason}`}
    >
      <span aria-hidden>❄</span>
      Frozen until {formatLocalTime(freeze.until)}
    </span>
  );
}
