import { useQuery } from '@tanstack/react-query';
import { Link, Outlet } from 'react-router';
import { clustersQueryOptions } from '../features/apps/api/apps-queries.ts';
import { UserMenu } from '../features/auth/components/user-menu.tsx';
import { EvidenceBanner } from '../features/evidence/components/evidence-banner.tsx';
import { useLiveUpdates } from './use-live-updates.ts';

export function Layout() {
  const stream = useLiveUpdates();
  const clusters = useQuery(clustersQueryOptions());
  return (
    <div className="min-h-screen">
      <header className="flex items-center gap-4 border-b border-slate-200 bg-white px-6 py-3">
        <Link to="/" className="flex items-center gap-2 font-semibold text-teal-800">
          <img src="/favicon.svg" alt="" className="h-6 w-6" /> GitOps Governance Console
        </Link>
        <div className="flex gap-2 text-xs">
          {clusters.data?.clusters.map((c) => (
            <span
              key={c.name}
              data-testid="cluster-pill"
              data-status={c.status}
              className={`rounded-full px-2 py-0.5 ring-1 ${c.status === 'connected' ? 'bg-emerald-50 text-emerald-800 ring-emerald-300' : c.status === 'unreachable' ? 'bg-amber-50 text-amber-900 ring-amber-300' : 'bg-slate-50 text-slate-600 ring-slate-300'}`}
              title={c.reason ?? c.server}
            >
              {c.name}: {c.status}
            </span>
          ))}
        </div>
        <span className="ml-auto text-xs text-slate-500" data-testid="stream-status">
          updates: {stream}
        </span>
        <UserMenu />
      </header>
      <EvidenceBanner />
      <main className="p-6">
        <Outlet />
      </main>
    </div>
  );
}
