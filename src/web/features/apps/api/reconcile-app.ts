// "Reconcile now": asks the app's controller to reconcile from Git now (the BFF records the evidence).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { appPath, ReconcileResponse } from '../../../../api/schemas.ts';
import type { App } from '../../../../domain/app.ts';
import { apiSend } from '../../../lib/api-client.ts';
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
