// The "Try it" page's API (sandbox mode only): the cards, a job's progress (polled while it runs), run and reset.
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { TryItJobResponse, TryItScenariosResponse } from '../../../../api/tryit.ts';
import { apiGet, apiSend } from '../../../lib/api-client.ts';

export const tryitKeys = {
  all: ['tryit'] as const,
  scenarios: () => [...tryitKeys.all, 'scenarios'] as const,
  job: (id: string) => [...tryitKeys.all, 'job', id] as const,
};

/** How often a running job's steps are read again. */
export const TRYIT_POLL_MS = 1_000;

export const tryitScenariosQueryOptions = () =>
  queryOptions({
    queryKey: tryitKeys.scenarios(),
    queryFn: ({ signal }) => apiGet('/api/tryit/scenarios', TryItScenariosResponse, { signal }),
    // someone else's run shows up (and ends) on every open page
    refetchInterval: (q) => (q.state.data?.running ? TRYIT_POLL_MS : 10_000),
    retry: false,
  });

export function useTryItScenarios() {
  return useQuery(tryitScenariosQueryOptions());
}

/** A job, polled every second while it runs. */
export function useTryItJob(id: string | undefined) {
  return useQuery({
    queryKey: tryitKeys.job(id ?? ''),
    queryFn: ({ signal }) => apiGet(`/api/tryit/jobs/${encodeURIComponent(id ?? '')}`, TryItJobResponse, { signal }),
    enabled: !!id,
    refetchInterval: (q) => (q.state.data?.job.state === 'running' ? TRYIT_POLL_MS : false),
  });
}

export function useRunScenario() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiSend('POST', `/api/tryit/scenarios/${encodeURIComponent(id)}/run`, TryItJobResponse),
    // the card shows why it did not start (busy, a freeze needed, the evidence store down)
    meta: { errors: 'inline' },
    onSettled: () => qc.invalidateQueries({ queryKey: tryitKeys.scenarios() }),
  });
}

export function useResetSandbox() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => apiSend('POST', '/api/tryit/reset', TryItJobResponse),
    meta: { errors: 'inline' },
    onSettled: () => qc.invalidateQueries({ queryKey: tryitKeys.scenarios() }),
  });
}
