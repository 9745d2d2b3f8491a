// Manifests per release (issue 28): the release live at a time, its stored objects, two releases compared.
// Recorded evidence never changes: answers stay fresh for the page's life.
import { queryOptions } from '@tanstack/react-query';
import { appPath, CompareResponse, ReleaseAtResponse, ReleaseManifestsResponse } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

const base = (app: string) => `/api/apps/${appPath(app)}/releases`;

export const releaseAtQueryOptions = (app: string, time: string) =>
  queryOptions({
    queryKey: ['releases', 'app', app, 'at', time] as const,
    queryFn: ({ signal }) => apiGet(`${base(app)}/at?${new URLSearchParams({ time })}`, ReleaseAtResponse, { signal }),
    staleTime: Infinity,
  });

export const manifestsQueryOptions = (app: string, sha: string) =>
  queryOptions({
    queryKey: ['releases', 'app', app, 'manifests', sha] as const,
    queryFn: ({ signal }) => apiGet(`${base(app)}/${sha}/manifests`, ReleaseManifestsResponse, { signal }),
    staleTime: Infinity,
    retry: false,
  });

export const compareQueryOptions = (app: string, from: string, to: string) =>
  queryOptions({
    queryKey: ['releases', 'app', app, 'compare', from, to] as const,
    queryFn: ({ signal }) =>
      apiGet(`${base(app)}/compare?${new URLSearchParams({ from, to })}`, CompareResponse, { signal }),
    staleTime: Infinity,
    retry: false,
  });
