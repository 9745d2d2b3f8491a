import { queryOptions } from '@tanstack/react-query';
import { DiffResponse, appPath } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

export const diffKeys = { app: (appId: string) => ['diff', appId] as const };

export const diffQueryOptions = (appId: string) =>
  queryOptions({
    queryKey: diffKeys.app(appId),
    queryFn: ({ signal }) => apiGet(`/api/apps/${appPath(appId)}/diff`, DiffResponse, { signal }),
    staleTime: 5_000,
  });
