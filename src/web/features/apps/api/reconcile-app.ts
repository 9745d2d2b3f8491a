// "Reconcile now": asks the app's controller to reconcile from Git now (the BFF records the evidence),
// then follows the controller until it acknowledges the request (reconcile-status).
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { appPath, ReconcileResponse, ReconcileStatusResponse } from '../../../../api/schemas.ts';
import type { App } from '../../../../domain/app.ts';
import { apiGet, apiSend } from '../../../lib/api-client.ts';
import { reconcileStatusPollMs } from '../lib/reconcile-status-text.ts';
import { appKeys } from './apps-queries.ts';

export const reconcileApp = (id: string) => apiSend('POST', `/api/apps/${appPath(id)}/reconcile`, ReconcileResponse);

/** Errors surface once, through the MutationCache toast; the caller renders only the success. */
export function useReconcileApp(app: Pick<App, 'id'>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => reconcileApp(app.id),
    meta: { errorTitle: 'Reconcile failed' },
    onSuccess: () => void qc.invalidateQueries({ queryKey: appKeys.detail(app.id) }),
  });
}

export const getReconcileStatus = (id: string, requestedAt: string, signal?: AbortSignal) =>
  apiGet(
    `/api/apps/${appPath(id)}/reconcile-status?requestedAt=${encodeURIComponent(requestedAt)}`,
    ReconcileStatusResponse,
    { signal },
  );

/** Polled each second until the controller answers (or the BFF says it timed out). */
export const reconcileStatusQueryOptions = (id: string, requestedAt: string) =>
  queryOptions({
    queryKey: appKeys.reconcileStatus(id, requestedAt),
    queryFn: ({ signal }) => getReconcileStatus(id, requestedAt, signal),
    refetchInterval: (q) => reconcileStatusPollMs(q.state.data),
    staleTime: 0,
  });

/** The follow-up of the last "Reconcile now" (nothing before the first request). */
export function useReconcileStatus(id: string, requestedAt: string | undefined) {
  return useQuery({ ...reconcileStatusQueryOptions(id, requestedAt ?? ''), enabled: !!requestedAt });
}
