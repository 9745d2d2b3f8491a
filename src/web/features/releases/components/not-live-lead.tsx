// The app header leads with "merged, but not live — why?" (issue 16): the newest release's first incomplete
// state, ahead of older problems (an HPA warning says less than a BuildFailed on the new revision). Shown only to
// those who may read the app's releases; nothing while it loads or when the newest release is live.
import { useQuery } from '@tanstack/react-query';
import { releaseLiveness } from '../../../../domain/release-not-live.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { releasesQueryOptions } from '../api/release-queries.ts';

export function NotLiveLead({ appId, cluster, env }: { appId: string; cluster: string; env: string }) {
  const perm = usePermission('release.read', { cluster, env });
  const q = useQuery({ ...releasesQueryOptions(appId), enabled: perm.allowed });
  const newest = q.data?.releases[0];
  const why = q.data?.notLive;
  if (!newest || !why) return null;
  return (
    <p
      className="mt-2 rounded border border-amber-300 bg-amber-50 px-2 py-1 text-sm text-amber-900 wrap-anywhere"
      data-testid="header-not-live"
    >
      <strong>{releaseLiveness(newest, why).label}</strong> {newest.sha.slice(0, 7)} stops at{' '}
      <strong>{why.state}</strong> — {why.why}
    </p>
  );
}
