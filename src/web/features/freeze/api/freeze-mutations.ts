// Freeze, extend and end (unfreeze): CSRF like every mutation; the BFF takes role and scope from the session.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import { FreezeCreateBody, FreezeEndBody, FreezeExtendBody, FreezeResponse } from '../../../../api/schemas.ts';
import { apiSend } from '../../../lib/api-client.ts';
import { freezeKeys } from './freeze-queries.ts';

export type FreezeCreateInput = z.input<typeof FreezeCreateBody>;
export type FreezeExtendInput = z.input<typeof FreezeExtendBody>;
export type FreezeDecision = z.output<typeof FreezeEndBody>['decisions'][number];

export const createFreeze = (body: FreezeCreateInput) =>
  apiSend('POST', '/api/freezes', FreezeResponse, FreezeCreateBody.parse(body));

export const extendFreeze = (id: string, body: FreezeExtendInput) =>
  apiSend('POST', `/api/freezes/${encodeURIComponent(id)}/extend`, FreezeResponse, FreezeExtendBody.parse(body));

export const endFreeze = (id: string, decisions: FreezeDecision[]) =>
  apiSend('POST', `/api/freezes/${encodeURIComponent(id)}/end`, FreezeResponse, FreezeEndBody.parse({ decisions }));

/** The form shows a 400's field errors next to its fields, and any other error above its buttons. */
export function useCreateFreeze() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: createFreeze,
    meta: { errors: 'inline' },
    onSuccess: (r) => {
      qc.setQueryData(freezeKeys.detail(r.freeze.id), r);
      // the app objects carry the freeze (annotations): the live stream brings it to every page
      void qc.invalidateQueries({ queryKey: freezeKeys.all });
    },
  });
}

export function useExtendFreeze(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: FreezeExtendInput) => extendFreeze(id, body),
    meta: { errors: 'inline' },
    onSuccess: (r) => {
      qc.setQueryData(freezeKeys.detail(id), r);
    },
    onSettled: () => void qc.invalidateQueries({ queryKey: freezeKeys.list(true) }),
  });
}

export function useEndFreeze(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (decisions: FreezeDecision[]) => endFreeze(id, decisions),
    meta: { errors: 'inline' },
    onSuccess: (r) => {
      qc.setQueryData(freezeKeys.detail(id), r);
    },
    onSettled: () => void qc.invalidateQueries({ queryKey: freezeKeys.all }),
  });
}
