// Planned freeze windows: the list (polled: a window starts and ends on its own), plan one, delete one with a reason.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import {
  BreakGlassBody,
  BreakGlassResponse,
  FreezeWindowCreateBody,
  FreezeWindowDeleteBody,
  FreezeWindowResponse,
} from '../../../../api/schemas.ts';
import { apiGet, apiSend } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';
import { windowKeys, windowsQueryOptions } from '../../../lib/freeze-windows-query.ts';
import { freezeKeys } from './freeze-queries.ts';

export type FreezeWindowInput = z.input<typeof FreezeWindowCreateBody>;

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

// ---- break-glass through a window in force (decision 0026) ----------------------------------------------------

export const breakGlassKeys = { all: ['break-glass'] as const };

export function useBreakGlassRequests() {
  return useQuery({
    queryKey: breakGlassKeys.all,
    queryFn: ({ signal }) => apiGet('/api/break-glass', lazy('BreakGlassListResponse'), { signal }),
    // an approval elsewhere, and the end when the minutes are up, show without a reload
    refetchInterval: 10_000,
  });
}

/** Ask to deploy one app through a window in force; the form shows a 400's message next to its fields. */
export function useRequestBreakGlass() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ window, ...body }: { window: string; app: string; reason: string; minutes: number }) =>
      apiSend(
        'POST',
        `/api/freeze-windows/${encodeURIComponent(window)}/break-glass`,
        BreakGlassResponse,
        BreakGlassBody.parse(body),
      ),
    meta: { errors: 'inline' },
    onSuccess: () => void qc.invalidateQueries({ queryKey: breakGlassKeys.all }),
  });
}

/** A second person approves: the window's freeze of the app ends. */
export function useApproveBreakGlass() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      apiSend('POST', `/api/break-glass/${encodeURIComponent(id)}/approve`, BreakGlassResponse, {}),
    meta: { errors: 'inline' },
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: breakGlassKeys.all });
      void qc.invalidateQueries({ queryKey: freezeKeys.all });
    },
  });
}
