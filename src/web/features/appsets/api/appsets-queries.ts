// ApplicationSets: the list (the overview's grouping), one ApplicationSet (its page), and the request of a prune
// preview of its shrink (the preview is then an ordinary prune preview: its page, queue and approvals).
import { queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { appSetPath, type AppSetsResponse, type AppSetView } from '../../../../api/appsets.ts';
import { PrunePreviewResponse } from '../../../../api/schemas.ts';
import { apiGet, apiSend } from '../../../lib/api-client.ts';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const AppSetsSchema = z.custom<AppSetsResponse>(
  (v) => isObj(v) && Array.isArray(v.appsets) && Array.isArray(v.unknown),
);
const AppSetSchema = z.custom<{ appset: AppSetView }>(
  (v) => isObj(v) && isObj(v.appset) && Array.isArray(v.appset.owned) && isObj(v.appset.shrink),
);

export const appSetKeys = {
  all: ['appsets'] as const,
  list: () => [...appSetKeys.all, 'list'] as const,
  detail: (path: string) => [...appSetKeys.all, 'detail', path] as const,
};

export const appSetsQueryOptions = () =>
  queryOptions({
    queryKey: appSetKeys.list(),
    queryFn: ({ signal }) => apiGet('/api/appsets', AppSetsSchema, { signal }),
    refetchInterval: 15_000,
  });

export const appSetQueryOptions = (s: { cluster: string; namespace: string; name: string }) =>
  queryOptions({
    queryKey: appSetKeys.detail(appSetPath(s)),
    queryFn: ({ signal }) => apiGet(`/api/appsets/${appSetPath(s)}`, AppSetSchema, { signal }),
    refetchInterval: 10_000,
  });

export const useAppSets = () => useQuery(appSetsQueryOptions());
export const useAppSet = (s: { cluster: string; namespace: string; name: string }) => useQuery(appSetQueryOptions(s));

/** Errors surface once, through the MutationCache toast. */
export function usePreviewShrink(s: { cluster: string; namespace: string; name: string }) {
  return useMutation({
    mutationFn: () => apiSend('POST', `/api/appsets/${appSetPath(s)}/prune-previews`, PrunePreviewResponse),
    meta: { errorTitle: 'Shrink preview failed' },
  });
}
