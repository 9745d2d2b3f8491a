// A canary promoted, aborted, retried, paused or resumed, with its reason (src/server/apps/rollout-actions.ts).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { appPath } from '../../../../api/schemas.ts';
import { apiSend } from '../../../lib/api-client.ts';
import { appKeys } from './apps-queries.ts';

export const ROLLOUT_VERBS = ['promote', 'promote-full', 'abort', 'retry', 'pause', 'resume'] as const;
export type RolloutVerb = (typeof ROLLOUT_VERBS)[number];
const ControlResponse = z.object({ verb: z.enum(ROLLOUT_VERBS), patches: z.number(), phase: z.string() });

/** Errors surface once, through the MutationCache toast. */
export function useControlRollout(appId: string, rollout: { namespace: string; name: string }) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { verb: RolloutVerb; reason: string }) =>
      apiSend(
        'POST',
        `/api/apps/${appPath(appId)}/rollouts/${encodeURIComponent(rollout.namespace)}/${encodeURIComponent(rollout.name)}/${v.verb}`,
        ControlResponse,
        { reason: v.reason },
      ),
    meta: { errorTitle: 'Canary control failed' },
    onSuccess: () => void qc.invalidateQueries({ queryKey: appKeys.detail(appId) }),
  });
}
