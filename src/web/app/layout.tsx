import { useQuery } from '@tanstack/react-query';
import { useRef } from 'react';
import { Link, Outlet, ScrollRestoration } from 'react-router';
import { Hint } from '../components/hint.tsx';
import { ThemeToggle } from '../components/theme-toggle.tsx';
import { clustersQueryOptions } from '../features/apps/api/apps-queries.ts';
import { UserMenu } from '../features/auth/components/user-menu.tsx';
import { EvidenceBanner } from '../features/evidence/components/evidence-banner.tsx';
import { useFocusRestore } from './use-focus-restore.ts';
import { useLiveUpdates } from './use-live-updates.ts';

const PILL = {
  connected: 'bg-emerald-50 text-emerald-800 ring-emerald-300',
  unreachable: 'bg-amber-50 text-amber-900 ring-amber-300',
  other: 'bg-slate-50 text-slate-700 ring-slate-300',
};

export function Layout() {
  const stream = useLiveUpdates();
  const clusters = useQuery(clustersQueryOptions());
  const main = useRef<HTMLElement>(null);
  useFocusRestore(main);
  return (
    <div className="min-h-screen">
      <a
        href="#main"
        onClick={(e) => {
          // focus the content without adding #main to the URL (and to the history)
          e.preventDefault();
          main.current?.focus();
        }}
        className="sr-only rounded bg-white px-3 py-2 text-sm font-medium text-teal-800 shadow focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50"
      >
        Skip to main content
      </a>
      <header className="flex flex-wrap items-center gap-x-4 gap-y-2 border-b border-slate-200 bg-white px-6 py-3">
        <Link to="/" className="flex items-center gap-2 font-semibold text-teal-800">
          <img src="/favicon.svg" alt="" className="h-6 w-6" /> GitOps Governance Console
        </Link>
        <Link to="/evidence" className="text-sm text-teal-800 underline">
          Evidence
        </Link>
        <Link to="/freezes" className="text-sm text-teal-800 underline">
          Freezes
        </Link>
        <ul className="flex flex-wrap gap-2 text-xs" aria-label="Clusters">
          {clusters.data?.clusters.map((c) => (
            <li key={c.name}>
              <Hint hint={c.reason ?? c.server}>
                <span
                  data-testid="cluster-pill"
                  data-status={c.status}
                  className={`rounded-full px-2 py-0.5 ring-1 ${c.status === 'connected' ? PILL.connected : c.status === 'unreachable' ? PILL.unreachable : PILL.other}`}
                >
                  {c.name}: {c.status}
                </span>
              </Hint>
            </li>
          ))}
        </ul>
        <span className="ml-auto text-xs text-slate-600" data-testid="stream-status">
          updates: {stream}
        </span>
        <ThemeToggle />
        <UserMenu />
      </header>
      <EvidenceBanner />
      <main id="main" ref={main} tabIndex={-1} className="p-6 outline-none">
        <Outlet />
      </main>
      <ScrollRestoration />
    </div>
  );
}
