// A Flagger canary promoted (its confirm-promotion gate opened) or rolled back (its rollback gate opened), with its
// reason (src/server/apps/flagger-actions.ts).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { appPath } from '../../../../api/schemas.ts';
import { apiSend } from '../../../lib/api-client.ts';
import { appKeys } from './apps-queries.ts';

export const FLAGGER_VERBS = ['promote', 'rollback'] as const;
export type FlaggerVerb = (typeof FLAGGER_VERBS)[number];
const ControlResponse = z.object({ verb: z.enum(FLAGGER_VERBS), phase: z.string(), gate: z.string() });

/** Errors surface once, through the MutationCache toast. */
export function useControlFlagger(appId: string, canary: { namespace: string; name: string }) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { verb: FlaggerVerb; reason: string }) =>
      apiSend(
        'POST',
        `/api/apps/${appPath(appId)}/canaries/${encodeURIComponent(canary.namespace)}/${encodeURIComponent(canary.name)}/${v.verb}`,
        ControlResponse,
        { reason: v.reason },
      ),
    meta: { errorTitle: 'Canary control failed' },
    onSuccess: () => void qc.invalidateQueries({ queryKey: appKeys.detail(appId) }),
  });
}
