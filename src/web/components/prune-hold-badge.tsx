// The card's "held: prune needs approval" badge (domain/prune-hold.ts); the app page's line with the previews is
// features/prune/components/prune-hold.tsx.
import type { AppSummary } from '../../api/schemas.ts';
import { pruneHoldLine } from '../../domain/prune-hold.ts';
import { Tag } from './badges.tsx';

/** The card's badge (the card is a link itself: no link inside). */
export function PruneHoldBadge({ app }: { app: Pick<AppSummary, 'pruneHold'> }) {
  if (!app.pruneHold) return null;
  return (
    <span data-testid="prune-hold-badge">
      <Tag tone="amber" title={pruneHoldLine(app.pruneHold)}>
        held: prune needs approval
      </Tag>
    </span>
  );
}
