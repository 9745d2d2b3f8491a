// Incident freezes: one freeze (with its live changes, polled while it is active) and the list.
import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

export const freezeKeys = {
  all: ['freezes'] as const,
  list: (active: boolean) => [...freezeKeys.all, 'list', active ? 'active' : 'all'] as const,
  detail: (id: string) => [...freezeKeys.all, 'detail', id] as const,
  changes: (id: string) => [...freezeKeys.detail(id), 'changes'] as const,
};

/** How often the live changes of an active freeze are read again. */
export const FREEZE_CHANGES_POLL_MS = 5_000;

export const getFreeze = (id: string, signal?: AbortSignal) =>
  apiGet(`/api/freezes/${encodeURIComponent(id)}`, lazy('FreezeResponse'), { signal });

export const freezeQueryOptions = (id: string) =>
  queryOptions({
    queryKey: freezeKeys.detail(id),
    queryFn: ({ signal }) => getFreeze(id, signal),
    // an active freeze can expire, be extended or be undone out of band; while a Flux controller has not yet
    // confirmed the pause (usually a second or two), sooner
    refetchInterval: (q) => {
      const f = q.state.data?.freeze;
      if (!f?.active) return false;
      return f.targets.some((t) => t.applied && t.controllerPause && !t.controllerPause.confirmed) ? 2_000 : 15_000;
    },
  });

export function useFreeze(id: string) {
  return useQuery(freezeQueryOptions(id));
}

export const getFreezeChanges = (id: string, signal?: AbortSignal) =>
  apiGet(`/api/freezes/${encodeURIComponent(id)}/changes`, lazy('FreezeChangesResponse'), { signal });

/** The live changes since the freeze began: polled every 5 s while the freeze is active. */
export function useFreezeChanges(id: string, active: boolean) {
  return useQuery({
    queryKey: freezeKeys.changes(id),
    queryFn: ({ signal }) => getFreezeChanges(id, signal),
    enabled: active,
    refetchInterval: active ? FREEZE_CHANGES_POLL_MS : false,
    staleTime: 0,
  });
}

export const getFreezes = (active: boolean, signal?: AbortSignal) =>
  apiGet(`/api/freezes${active ? '?active=true' : ''}`, lazy('FreezesResponse'), { signal });

export const freezesQueryOptions = (active = false) =>
  queryOptions({
    queryKey: freezeKeys.list(active),
    queryFn: ({ signal }) => getFreezes(active, signal),
    refetchInterval: 15_000,
  });

export function useFreezes(active = false) {
  return useQuery(freezesQueryOptions(active));
}
