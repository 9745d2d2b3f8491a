import type { QueryClient } from '@tanstack/react-query';
import { createBrowserRouter, isRouteErrorResponse, Link, useRouteError } from 'react-router';
import { appQueryOptions, appsQueryOptions, clustersQueryOptions } from '../features/apps/api/apps-queries.ts';
import { treeQueryOptions } from '../features/tree/api/tree-queries.ts';
import { Layout } from './layout.tsx';

function RouteError() {
  const err = useRouteError();
  const msg = isRouteErrorResponse(err)
    ? `${err.status} ${err.statusText}`
    : err instanceof Error
      ? err.message
      : 'unexpected error';
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
    {
      path: '/',
      element: <Layout />,
      errorElement: <RouteError />,
      children: [
        {
          index: true,
          errorElement: <RouteError />,
          loader: async () => {
            await Promise.allSettled([
              qc.ensureQueryData(appsQueryOptions()),
              qc.ensureQueryData(clustersQueryOptions()),
            ]);
            return null;
          },
          lazy: async () => ({ Component: (await import('../features/apps/components/app-overview.tsx')).AppOverview }),
        },
        {
          path: 'apps/:cluster/:namespace/:kind/:name',
          errorElement: <RouteError />,
          loader: async ({ params }) => {
            const id = `${params.cluster}/${params.namespace}/${params.kind}/${params.name}`;
            // the tree is the biggest response: start it now, in parallel with the app itself
            void qc.prefetchQuery(treeQueryOptions(id, 1));
            void qc.prefetchQuery(treeQueryOptions(id));
            await Promise.allSettled([qc.ensureQueryData(appQueryOptions(id))]);
            return null;
          },
          lazy: async () => ({ Component: (await import('../features/apps/components/app-page.tsx')).AppPage }),
        },
      ],
    },
  ]);
}
