// The environment page composes the releases feature (charts, apps, newest releases), the freeze feature's
// calendar (issue 43) and the apps feature's dependency graph (issue 26): a route of the composition layer.
import { useParams } from 'react-router';
import { EnvDependencies } from '../../features/apps/components/env-dependencies.tsx';
import { EnvCalendar } from '../../features/freeze/components/env-calendar.tsx';
import { EnvReleasesPage } from '../../features/releases/components/env-releases.tsx';

export function EnvPage() {
  const env = useParams().env ?? '';
  return (
    <div className="grid grid-cols-[minmax(0,1fr)] gap-4">
      <EnvReleasesPage />
      <EnvCalendar env={env} />
      <EnvDependencies env={env} />
    </div>
  );
}
