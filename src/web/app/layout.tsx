import { queryOptions, useQuery } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Link, NavLink, Outlet, ScrollRestoration } from 'react-router';
import { can } from '../../domain/access.ts';
import { Hint } from '../components/hint.tsx';
import { ThemeToggle } from '../components/theme-toggle.tsx';
import { appsQueryOptions, clustersQueryOptions } from '../features/apps/api/apps-queries.ts';
import { UserMenu } from '../features/auth/components/user-menu.tsx';
import { EvidenceBanner } from '../features/evidence/components/evidence-banner.tsx';
import { freezesQueryOptions } from '../features/freeze/api/freeze-queries.ts';
import { prunePreviewsAwaitingMeQueryOptions } from '../features/prune/api/prune-queries.ts';
import { ApiError, apiGet } from '../lib/api-client.ts';
import { lazy } from '../lib/lazy-parsers.ts';
import { sessionQueryOptions } from '../lib/session.ts';
import { useFocusRestore } from './use-focus-restore.ts';
import { useLiveUpdates } from './use-live-updates.ts';

const PILL = {
  connected: 'bg-emerald-50 text-emerald-800 ring-emerald-300',
  unreachable: 'bg-amber-50 text-amber-900 ring-amber-300',
  other: 'bg-slate-50 text-slate-700 ring-slate-300',
};

const NAV_LINK = ({ isActive }: { isActive: boolean }) =>
  `rounded px-1 text-teal-800 underline underline-offset-2 ${isActive ? 'font-semibold' : ''}`;

/** "Try it" (the sandbox's guided scenarios) exists only in sandbox mode: the route answers 404 elsewhere. */
const tryItQueryOptions = () =>
  queryOptions({
    queryKey: ['nav', 'tryit-available'] as const,
    queryFn: ({ signal }) =>
      apiGet('/api/tryit/scenarios', lazy('AnyJson'), { signal }).then(
        () => true,
        (e: unknown) => {
          if (e instanceof ApiError && e.status < 500) return false;
          throw e;
        },
      ),
    staleTime: Infinity,
    retry: false,
  });

/** The environments the user may open (/envs/:env needs evidence.read there): read when the menu opens. */
function EnvironmentsMenu() {
  const [open, setOpen] = useState(false);
  const details = useRef<HTMLDetailsElement>(null);
  const close = () => {
    if (details.current) details.current.open = false;
  };
  return (
    <details
      ref={details}
      className="relative"
      onToggle={(e) => setOpen(e.currentTarget.open)}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && details.current?.open) {
          close();
          details.current.querySelector('summary')?.focus();
        }
      }}
    >
      <summary className="cursor-pointer rounded px-1 text-teal-800 underline underline-offset-2">Environments</summary>
      {open && <EnvironmentLinks onPick={close} />}
    </details>
  );
}

function EnvironmentLinks({ onPick }: { onPick: () => void }) {
  const session = useQuery(sessionQueryOptions());
  const envs = useQuery({ ...appsQueryOptions(), select: (d) => d.envs });
  const grants = session.data?.user.grants ?? [];
  const mine = (envs.data ?? []).filter((env) => can(grants, 'evidence.read', { env }));
  return (
    <div className="absolute top-full left-0 z-40 mt-1 w-max max-w-[min(20rem,calc(100vw-3rem))] rounded border border-slate-200 bg-white p-2 shadow-lg">
      {envs.isPending && <p className="text-slate-600">Loading…</p>}
      {envs.isError && <p role="alert">Cannot list the environments: {envs.error.message}</p>}
      {envs.data && !mine.length && <p className="text-slate-600">No environment to show.</p>}
      {mine.length > 0 && (
        <ul aria-label="Environments" className="flex flex-col gap-1">
          {mine.map((env) => (
            <li key={env}>
              <NavLink
                to={`/envs/${encodeURIComponent(env)}`}
                onClick={onPick}
                className={(s) => `${NAV_LINK(s)} block wrap-anywhere`}
              >
                {env}
              </NavLink>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Every place a role works, as far as the signed-in user may open it; counts stay live (use-live-updates.ts). */
function MainNav() {
  const session = useQuery(sessionQueryOptions());
  const grants = session.data?.user.grants ?? [];
  const signedIn = !!session.data;
  const approver = can(grants, 'prune.approve');
  const evidence = can(grants, 'evidence.read');
  const awaiting = useQuery({ ...prunePreviewsAwaitingMeQueryOptions(), enabled: approver });
  const freezes = useQuery({ ...freezesQueryOptions(true), enabled: signedIn && can(grants, 'app.read') });
  const tryIt = useQuery({ ...tryItQueryOptions(), enabled: signedIn });
  if (!signedIn) return null;
  const waiting = awaiting.data?.previews.length;
  const active = freezes.data?.freezes.filter((f) => f.active).length;
  return (
    <nav aria-label="Main">
      <ul className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
        {can(grants, 'app.read') && (
          <li>
            <NavLink to="/prune-previews" end className={NAV_LINK} data-testid="nav-prune-previews">
              Prune previews{approver && waiting !== undefined ? ` (${waiting})` : ''}
            </NavLink>
          </li>
        )}
        {can(grants, 'app.read') && (
          <li>
            <NavLink to="/freezes" end className={NAV_LINK} data-testid="nav-freezes">
              Freezes{active !== undefined ? ` (${active} active)` : ''}
            </NavLink>
          </li>
        )}
        {evidence && (
          <li>
            <EnvironmentsMenu />
          </li>
        )}
        {evidence && (
          <li>
            <NavLink to="/evidence" className={NAV_LINK}>
              Evidence
            </NavLink>
          </li>
        )}
        {can(grants, 'sinks.manage', { cluster: '*', env: '*' }) && (
          <li>
            <NavLink to="/sinks" className={NAV_LINK}>
              Event sinks
            </NavLink>
          </li>
        )}
        {tryIt.data === true && (
          <li>
            <NavLink to="/try" className={NAV_LINK}>
              Try it
            </NavLink>
          </li>
        )}
      </ul>
    </nav>
  );
}

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
        <MainNav />
        <ul className="flex min-w-0 flex-wrap gap-2 text-xs" aria-label="Clusters">
          {clusters.data?.clusters.map((c) => (
            <li key={c.name} className="min-w-0">
              <Hint hint={c.reason ?? c.server}>
                <span
                  data-testid="cluster-pill"
                  data-status={c.status}
                  className={`rounded-full px-2 py-0.5 ring-1 wrap-anywhere ${c.status === 'connected' ? PILL.connected : c.status === 'unreachable' ? PILL.unreachable : PILL.other}`}
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
      <main id="main" ref={main} tabIndex={-1} className="min-w-0 p-6 break-words outline-none">
        <Outlet />
      </main>
      <ScrollRestoration />
    </div>
  );
}
