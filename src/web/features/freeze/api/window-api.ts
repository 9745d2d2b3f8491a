// Planned freeze windows: the list (polled: a window starts and ends on its own), plan one, delete one with a reason.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import { FreezeWindowCreateBody, FreezeWindowDeleteBody, FreezeWindowResponse } from '../../../../api/schemas.ts';
import { apiSend } from '../../../lib/api-client.ts';
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
