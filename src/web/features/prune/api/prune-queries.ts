// Prune previews: one preview (polled while it runs, for the progress of its batches) and the reviewer queue.
import { queryOptions, useQuery } from '@tanstack/react-query';
import type { z } from 'zod';
import type { PrunePreviewStatusSchema, PrunePreviewResponse as PreviewResponse } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

export type PrunePreviewState = z.infer<typeof PrunePreviewStatusSchema>;

export const pruneKeys = {
  all: ['prune-previews'] as const,
  list: (state: PrunePreviewState | 'all') => [...pruneKeys.all, 'list', state] as const,
  detail: (id: string) => [...pruneKeys.all, 'detail', id] as const,
  /** the pending previews waiting for the signed-in user's decision (under `all`: the live stream refreshes it) */
  awaitingMe: () => [...pruneKeys.all, 'awaiting', 'me'] as const,
};

export const getPrunePreview = (id: string, signal?: AbortSignal) =>
  apiGet(`/api/prune-previews/${encodeURIComponent(id)}`, lazy('PrunePreviewResponse'), { signal });

/**
 * While approved or executing, polled each second: the batches' progress; while its controller has not deleted
 * the stamped objects yet (or that is unknown), every 5 s: the handover.
 */
export const prunePreviewRefetchMs = (data: PreviewResponse | undefined): number | false =>
  data && ['approved', 'executing'].includes(data.preview.status)
    ? 1000
    : data?.handover && ['waiting', 'unknown'].includes(data.handover.state)
      ? 5000
      : false;

export const prunePreviewQueryOptions = (id: string) =>
  queryOptions({
    queryKey: pruneKeys.detail(id),
    queryFn: ({ signal }) => getPrunePreview(id, signal),
    refetchInterval: (q) => prunePreviewRefetchMs(q.state.data),
  });

export function usePrunePreview(id: string) {
  return useQuery(prunePreviewQueryOptions(id));
}

export const getPrunePreviews = (state: PrunePreviewState | 'all', signal?: AbortSignal) =>
  apiGet(`/api/prune-previews${state === 'all' ? '' : `?state=${state}`}`, lazy('PrunePreviewsResponse'), { signal });

export const prunePreviewsQueryOptions = (state: PrunePreviewState | 'all' = 'pending') =>
  queryOptions({
    queryKey: pruneKeys.list(state),
    queryFn: ({ signal }) => getPrunePreviews(state, signal),
    refetchInterval: 15_000,
  });

export function usePrunePreviews(state: PrunePreviewState | 'all' = 'pending') {
  return useQuery(prunePreviewsQueryOptions(state));
}

export const getPrunePreviewsAwaitingMe = (signal?: AbortSignal) =>
  apiGet('/api/prune-previews?awaiting=me', lazy('PrunePreviewsResponse'), { signal });

/** The previews the signed-in user may approve now (the BFF decides, with the approve route's checks). */
export const prunePreviewsAwaitingMeQueryOptions = () =>
  queryOptions({
    queryKey: pruneKeys.awaitingMe(),
    queryFn: ({ signal }) => getPrunePreviewsAwaitingMe(signal),
    refetchInterval: 15_000,
  });
