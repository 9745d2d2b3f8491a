// Approve or reject a prune preview (a reviewer who did not request it); the BFF records the decision first.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { PruneDecisionBody, PrunePreviewResponse } from '../../../../api/schemas.ts';
import { apiSend } from '../../../lib/api-client.ts';
import { pruneKeys } from './prune-queries.ts';

/** The input, checked before it is sent (the same schema the BFF parses with). */
export const decidePruneInput = PruneDecisionBody;

export const decidePrunePreview = (id: string, decision: 'approve' | 'reject', body: PruneDecisionBody) =>
  apiSend(
    'POST',
    `/api/prune-previews/${encodeURIComponent(id)}/${decision}`,
    PrunePreviewResponse,
    decidePruneInput.parse(body),
  );

export function useDecidePrunePreview(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { decision: 'approve' | 'reject' } & PruneDecisionBody) => {
      const { decision, ...body } = v;
      return decidePrunePreview(id, decision, body);
    },
    meta: { errorTitle: 'Decision not recorded' },
    onSuccess: (r) => qc.setQueryData(pruneKeys.detail(id), r),
    // a refused or void approval changes the preview too: read it again either way
    onSettled: () => void qc.invalidateQueries({ queryKey: pruneKeys.all }),
  });
}
