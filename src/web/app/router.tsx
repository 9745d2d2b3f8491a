import type { QueryClient } from '@tanstack/react-query';
import { createBrowserRouter, isRouteErrorResponse, Link, redirect, useRouteError } from 'react-router';
import {
  appQueryOptions,
  appKeys,
  appsHeadQueryOptions,
  appsQueryOptions,
  OVERVIEW_FIRST,
  clustersQueryOptions,
  dependencyGraphQueryOptions,
} from '../features/apps/api/apps-queries.ts';
import { FILTER_KEYS } from '../features/apps/components/app-filters.ts';
import { SignInPage } from '../features/auth/components/sign-in-page.tsx';
import { freezeQueryOptions } from '../features/freeze/api/freeze-queries.ts';
import { prefetchEnvReleases } from '../features/releases/api/env-release-queries.ts';
import { prunePreviewQueryOptions } from '../features/prune/api/prune-queries.ts';
import { firstTreeWindowOptions } from '../features/tree/api/tree-queries.ts';
import { ApiError, signInPath } from '../lib/api-client.ts';
import { useDocumentTitle } from '../lib/document-title.ts';
import { sessionQueryOptions } from '../lib/session.ts';
import { Layout } from './layout.tsx';
import { NotFound } from './not-found.tsx';
import { PageSkeleton } from './page-skeleton.tsx';

function RouteError() {
  const err = useRouteError();
  const msg = isRouteErrorResponse(err)
    ? `${err.status} ${err.statusText}`
    : err instanceof Error
      ? err.message
      : 'unexpected error';
  useDocumentTitle('Error');
  return (
    <div className="p-6" role="alert">
      <p className="text-red-800">Something went wrong: {msg}</p>
      <Link to="/" className="text-teal-700 underline">
        Back to all apps
      </Link>
    </div>
  );
}

export function createRouter(qc: QueryClient) {
  return createBrowserRouter([
    { path: '/signin', element: <SignInPage /> },
    {
      path: '/',
      element: <Layout />,
      errorElement: <RouteError />,
      // the first load waits for the session: a skeleton, not a blank page
      hydrateFallbackElement: <PageSkeleton />,
      // a change of the search params only (filters) keeps the session check already made
      shouldRevalidate: ({ currentUrl, nextUrl, defaultShouldRevalidate }) =>
        currentUrl.pathname === nextUrl.pathname ? false : defaultShouldRevalidate,
      // every page needs a session: without one (or with a one-time password) go to sign-in, then come back
      loader: async ({ request }) => {
        const u = new URL(request.url);
        const here = `${u.pathname}${u.search}`;
        try {
          const s = await qc.ensureQueryData(sessionQueryOptions());
          if (s.mustChangePassword) return redirect(`${signInPath(here)}&change=1`);
        } catch (e) {
          if (e instanceof ApiError && e.status === 401) return redirect(signInPath(here));
          throw e;
        }
        return null;
      },
      children: [
        {
          index: true,
          errorElement: <RouteError />,
          // the overview's first answer (each group's first cards) unless the URL filters or the whole list is
          // cached: then the whole list (issue 27; the overview reads the rest after it paints)
          loader: async ({ request }) => {
            const filtered = [...new URL(request.url).searchParams.keys()].some((k) =>
              (FILTER_KEYS as string[]).includes(k),
            );
            await Promise.allSettled([
              filtered || qc.getQueryData(appKeys.list())
                ? qc.ensureQueryData(appsQueryOptions())
                : qc.ensureQueryData(appsHeadQueryOptions(OVERVIEW_FIRST)),
              qc.ensureQueryData(clustersQueryOptions()),
            ]);
            return null;
          },
          // the filters live in the search params: typing in the search box must not wait for loaders
          shouldRevalidate: ({ currentUrl, nextUrl, defaultShouldRevalidate }) =>
            currentUrl.pathname === nextUrl.pathname ? false : defaultShouldRevalidate,
          lazy: async () => ({ Component: (await import('./routes/overview-route.tsx')).OverviewRoute }),
        },
        {
          path: 'apps/:cluster/:namespace/:kind/:name',
          errorElement: <RouteError />,
          loader: async ({ params, request }) => {
            const id = `${params.cluster}/${params.namespace}/${params.kind}/${params.name}`;
            // the tree's first answer (a window of its first two levels) starts now, in parallel with the app
            // itself; the whole tree only when the view finds it is not large (issue 27: 100,000 objects are 54 MB)
            if (!new URL(request.url).searchParams.has('tw')) void qc.prefetchQuery(firstTreeWindowOptions(id));
            await Promise.allSettled([qc.ensureQueryData(appQueryOptions(id))]);
            return null;
          },
          lazy: async () => ({ Component: (await import('./routes/app-page.tsx')).AppPage }),
        },
        {
          path: 'appsets/:cluster/:namespace/:name',
          errorElement: <RouteError />,
          lazy: async () => ({
            Component: (await import('../features/appsets/components/appset-page.tsx')).AppSetPage,
          }),
        },
        {
          path: 'evidence',
          errorElement: <RouteError />,
          lazy: async () => ({
            Component: (await import('../features/evidence/components/evidence-browser.tsx')).EvidenceBrowser,
          }),
        },
        {
          path: 'prune-previews',
          errorElement: <RouteError />,
          lazy: async () => ({ Component: (await import('../features/prune/components/prune-queue.tsx')).PruneQueue }),
        },
        {
          path: 'prune-previews/:id',
          errorElement: <RouteError />,
          loader: async ({ params }) => {
            await Promise.allSettled([qc.ensureQueryData(prunePreviewQueryOptions(params.id ?? ''))]);
            return null;
          },
          lazy: async () => ({
            Component: (await import('../features/prune/components/prune-preview-page.tsx')).PrunePreviewPage,
          }),
        },
        {
          path: 'envs/:env',
          errorElement: <RouteError />,
          loader: async ({ params, request }) => {
            await Promise.allSettled([
              prefetchEnvReleases(qc, params.env ?? '', new URL(request.url)),
              qc.prefetchQuery(dependencyGraphQueryOptions(params.env ?? '')),
            ]);
            return null;
          },
          lazy: async () => ({
            Component: (await import('./routes/env-route.tsx')).EnvPage,
          }),
        },
        {
          path: 'freezes',
          errorElement: <RouteError />,
          lazy: async () => ({ Component: (await import('./routes/freezes-route.tsx')).FreezesRoute }),
        },
        {
          path: 'freezes/:id',
          errorElement: <RouteError />,
          loader: async ({ params }) => {
            await Promise.allSettled([qc.ensureQueryData(freezeQueryOptions(params.id ?? ''))]);
            return null;
          },
          lazy: async () => ({
            Component: (await import('../features/freeze/components/freeze-page.tsx')).FreezePage,
          }),
        },
        {
          path: 'notifications',
          errorElement: <RouteError />,
          lazy: async () => ({
            Component: (await import('../features/notifications/components/notifications-page.tsx')).NotificationsPage,
          }),
        },
        {
          path: 'sinks',
          errorElement: <RouteError />,
          lazy: async () => ({ Component: (await import('../features/sinks/components/sinks-page.tsx')).SinksPage }),
        },
        {
          // the guided scenarios (sandbox mode only: elsewhere the page says so)
          path: 'try',
          errorElement: <RouteError />,
          lazy: async () => ({ Component: (await import('../features/tryit/components/tryit-page.tsx')).TryItPage }),
        },
        { path: '*', element: <NotFound /> },
      ],
    },
  ]);
}
