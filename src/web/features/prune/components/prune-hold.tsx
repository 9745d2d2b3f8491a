// "Held by the prune policy" (issue 39, item 6; domain/prune-hold.ts): its own status on the card and the app page,
// with the pending prune previews of the app (open one to approve), or "Preview prune" when there is none yet.
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { AppDto } from '../../../../api/schemas.ts';
import { pruneHoldLine } from '../../../../domain/prune-hold.ts';
import { prunePreviewsQueryOptions } from '../api/prune-queries.ts';

/** The app page's line: what is held, and the previews that would release it. */
export function PruneHoldLine({ app }: { app: Pick<AppDto, 'id' | 'pruneHold'> }) {
  const hold = app.pruneHold;
  const q = useQuery({ ...prunePreviewsQueryOptions('pending'), enabled: !!hold });
  if (!hold) return null;
  const mine = (q.data?.previews ?? []).filter((p) => p.appId === app.id);
  return (
    <p
      className="mt-2 rounded border border-amber-300 bg-amber-50 px-2 py-1 text-sm text-amber-900 wrap-anywhere"
      role="status"
      data-testid="prune-hold"
    >
      <span className="font-medium">{pruneHoldLine(hold)}</span>
      {mine.length > 0 ? (
        mine.map((p) => (
          <Link
            key={p.id}
            to={`/prune-previews/${p.id}`}
            className="ml-2 text-teal-800 underline"
            data-testid="prune-hold-preview"
          >
            open the pending preview ({p.approvals} of {p.requiredApprovals} approvals)
          </Link>
        ))
      ) : (
        <span className="ml-2" data-testid="prune-hold-none">
          {q.isSuccess
            ? 'No preview is pending: press “Preview prune” to request one, or bring the objects back in Git.'
            : ''}
        </span>
      )}
    </p>
  );
}
