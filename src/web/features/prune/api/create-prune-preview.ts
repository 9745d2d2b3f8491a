// "Preview prune": the BFF plans the app's prune at its pinned revision and stores it for a reviewer.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { appPath, PrunePreviewResponse } from '../../../../api/schemas.ts';
import { apiSend } from '../../../lib/api-client.ts';
import { pruneKeys } from './prune-queries.ts';

export const createPrunePreview = (appId: string) =>
  apiSend('POST', `/api/apps/${appPath(appId)}/prune-previews`, PrunePreviewResponse);

/** Errors surface once, through the MutationCache toast. */
export function useCreatePrunePreview(appId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => createPrunePreview(appId),
    meta: { errorTitle: 'Prune preview failed' },
    onSuccess: (r) => {
      qc.setQueryData(pruneKeys.detail(r.preview.id), r);
      void qc.invalidateQueries({ queryKey: pruneKeys.all });
    },
  });
}
