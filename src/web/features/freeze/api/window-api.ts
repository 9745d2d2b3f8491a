// Planned freeze windows: the list (polled: a window starts and ends on its own), plan one, delete one with a reason.
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import { FreezeWindowCreateBody, FreezeWindowDeleteBody, FreezeWindowResponse } from '../../../../api/schemas.ts';
import { apiGet, apiSend } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';
import { freezeKeys } from './freeze-queries.ts';

export const windowKeys = { all: ['freeze-windows'] as const };

export type FreezeWindowInput = z.input<typeof FreezeWindowCreateBody>;

export const windowsQueryOptions = () =>
  queryOptions({
    queryKey: windowKeys.all,
    queryFn: ({ signal }) => apiGet('/api/freeze-windows', lazy('FreezeWindowsResponse'), { signal }),
    refetchInterval: 15_000,
  });

export function useFreezeWindows() {
  return useQuery(windowsQueryOptions());
}

/** The form shows a 400's message next to its fields (errors inline). */
export function usePlanWindow() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: FreezeWindowInput) =>
      apiSend('POST', '/api/freeze-windows', FreezeWindowResponse, FreezeWindowCreateBody.parse(body)),
    meta: { errors: 'inline' },
    onSuccess: () => void qc.invalidateQueries({ queryKey: windowKeys.all }),
  });
}

export function useDeleteWindow() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ name, reason }: { name: string; reason: string }) =>
      apiSend(
        'POST',
        `/api/freeze-windows/${encodeURIComponent(name)}/delete`,
        FreezeWindowResponse,
        FreezeWindowDeleteBody.parse({ reason }),
      ),
    meta: { errors: 'inline' },
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: windowKeys.all });
      void qc.invalidateQueries({ queryKey: freezeKeys.all });
    },
  });
}
