// The freezes page composes the freeze feature with the apps the console knows (which environments of which
// clusters can be frozen): a route of the composition layer.
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { appsQueryOptions } from '../../features/apps/api/apps-queries.ts';
import { FreezesPage, type FreezableEnvironment } from '../../features/freeze/components/freezes-page.tsx';

export function FreezesRoute() {
  const apps = useQuery(appsQueryOptions());
  const environments = useMemo(() => {
    const m = new Map<string, FreezableEnvironment & { appIds: string[] }>();
    for (const a of apps.data?.apps ?? []) {
      const k = `${a.cluster}/${a.env}`;
      const e = m.get(k) ?? { cluster: a.cluster, env: a.env, apps: 0, appIds: [] };
      e.apps += 1;
      e.appIds.push(a.id);
      m.set(k, e);
    }
    return [...m.values()];
  }, [apps.data]);
  return <FreezesPage environments={environments} />;
}
