// The event sinks' admin API (api/sinks.ts): every sink's health and dead letters, polled while the page is open,
// and a dead letter's retry.
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { RetryDeadLetterResponse, SinksResponse } from '../../../../api/sinks.ts';
import { apiGet, apiSend } from '../../../lib/api-client.ts';

export const sinksKeys = { all: ['sinks'] as const };

export const sinksQueryOptions = () =>
  queryOptions({
    queryKey: sinksKeys.all,
    queryFn: ({ signal }) => apiGet('/api/sinks', SinksResponse, { signal }),
    refetchInterval: 3_000,
  });

export function useSinks() {
  return useQuery(sinksQueryOptions());
}

export function useRetryDeadLetter() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { sink: string; seq: number }) =>
      apiSend('POST', `/api/sinks/${encodeURIComponent(v.sink)}/dead-letters/${v.seq}/retry`, RetryDeadLetterResponse),
    meta: { errors: 'inline' },
    onSettled: () => qc.invalidateQueries({ queryKey: sinksKeys.all }),
  });
}
