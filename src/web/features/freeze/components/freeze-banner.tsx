// The banner of a frozen app: who froze it, why, how long is left (counting down), the incident, and the
// way to the freeze page. Fed by App.freeze, which arrives with the app over the list and the live stream.
import { Link } from 'react-router';
import type { AppDto } from '../../../../api/schemas.ts';
import { SafeLink } from '../../../components/safe-link.tsx';
import { Time } from '../../../components/time.tsx';
import { useNow } from '../../../lib/use-now.ts';
import { timeLeft } from '../lib/freeze-text.ts';

export function FreezeBanner({ freeze }: { freeze: NonNullable<AppDto['freeze']> }) {
  const now = useNow(1_000);
  const left = timeLeft(freeze.until, now);
  return (
    <section
      aria-label="Freeze"
      data-testid="freeze-banner"
      className="mb-3 rounded-lg border-2 border-sky-700 bg-sky-50 p-3 text-sky-950"
    >
      <p className="font-semibold">
        <span aria-hidden>❄ </span>
        <span data-testid="freeze-banner-text" className="wrap-anywhere">
          Frozen by {freeze.by}: {freeze.reason} — {left === 'expired' ? 'expired, ending' : `${left} left`}
        </span>
      </p>
      <p className="mt-1 flex flex-wrap gap-x-3 text-sm">
        <span>
          until <Time iso={freeze.until} />
        </span>
        {freeze.incident && <SafeLink href={freeze.incident}>Incident: {freeze.incident}</SafeLink>}
        <Link to={`/freezes/${encodeURIComponent(freeze.id)}`} className="text-teal-800 underline">
          Open the freeze (live changes, extend, unfreeze)
        </Link>
      </p>
      <p className="mt-1 text-xs text-sky-900">
        Reconciliation is paused: live changes are not reverted until the freeze ends.
      </p>
    </section>
  );
}
