// The overview: the apps by environment and cluster, then the ApplicationSets that generate some of them.
import { AppOverview } from '../../features/apps/components/app-overview.tsx';
import { AppSetsPanel } from '../../features/appsets/components/appsets-panel.tsx';

export function OverviewRoute() {
  return (
    <>
      <AppOverview />
      <AppSetsPanel />
    </>
  );
}
