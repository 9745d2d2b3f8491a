import { queryOptions } from '@tanstack/react-query';
import { appPath } from '../../../../api/plain.ts';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

export const diffKeys = { app: (appId: string) => ['diff', appId] as const };

export const diffQueryOptions = (appId: string) =>
  queryOptions({
    queryKey: diffKeys.app(appId),
    queryFn: ({ signal }) => apiGet(`/api/apps/${appPath(appId)}/diff`, lazy('DiffResponse'), { signal }),
    staleTime: 5_000,
  });
