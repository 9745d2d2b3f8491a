// An environment's calendar (issue 43): planned windows, Argo CD sync windows, freezes and releases in a range.
// Polled while open: windows start and end on their own, and releases happen.
import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

export const calendarKeys = {
  all: ['env-calendar'] as const,
  forEnv: (env: string, from: string, days: number) => [...calendarKeys.all, env, from, days] as const,
};

export const calendarQueryOptions = (env: string, from: string, days: number) =>
  queryOptions({
    queryKey: calendarKeys.forEnv(env, from, days),
    queryFn: ({ signal }) =>
      apiGet(
        `/api/envs/${encodeURIComponent(env)}/calendar?${new URLSearchParams({ from, days: String(days) })}`,
        lazy('EnvCalendarResponse'),
        { signal },
      ),
    refetchInterval: 30_000,
  });

export function useEnvCalendar(env: string, from: string, days: number, enabled: boolean) {
  return useQuery({ ...calendarQueryOptions(env, from, days), enabled });
}
