import { queryOptions } from '@tanstack/react-query';
import { appPath, ReleasesResponse } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

export const releaseKeys = {
  all: ['releases'] as const,
  forApp: (app: string) => [...releaseKeys.all, 'app', app] as const,
};

/** The app's releases, newest first; refetched while the page is open (the recorder adds states as they happen). */
export const releasesQueryOptions = (app: string) =>
  queryOptions({
    queryKey: releaseKeys.forApp(app),
    queryFn: ({ signal }) => apiGet(`/api/apps/${appPath(app)}/releases`, ReleasesResponse, { signal }),
    refetchInterval: 10_000,
  });
