import type { ClusterStateDto } from '../../../../api/schemas.ts';
import { staleness } from '../../../../domain/staleness.ts';
import { Time } from '../../../components/time.tsx';
import { TimeAgo } from '../../../components/time-ago.tsx';

export function StaleBanner({ clusters }: { clusters: ClusterStateDto[] }) {
  const down = clusters.filter((c) => c.status === 'unreachable');
  const back = clusters.filter((c) => c.status !== 'unreachable' && staleness(c).stale);
  if (down.length === 0 && back.length === 0) return null;
  return (
    <div
      role="alert"
      data-testid="stale-banner"
      className="mb-4 rounded border border-amber-300 bg-amber-50 px-4 py-3 text-sm text-amber-900"
    >
      {down.map((c) => (
        <div key={c.name}>
          <strong>Cluster {c.name} is unreachable</strong>: {c.reason ?? 'no answer'}. Its apps show data that is stale
          since <Time iso={c.staleSince ?? c.since} /> (<TimeAgo iso={c.staleSince ?? c.since} />
          ). The console keeps retrying.
        </div>
      ))}
      {back.map((c) => (
        <div key={c.name}>
          <strong>Cluster {c.name} is reconnecting</strong>: its apps show data that is stale since{' '}
          <Time iso={c.staleSince} /> (<TimeAgo iso={c.staleSince} />) until its objects are listed again.
        </div>
      ))}
    </div>
  );
}
