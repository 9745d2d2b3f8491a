import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiSend } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';
import { rememberSession, sessionKeys } from '../../../lib/session.ts';

export type SignInInput = { username: string; password: string };

/** A wrong password is a 401 the form shows (not a lost session): 'throw'. */
export const signIn = (input: SignInInput) =>
  rememberSession(apiSend('POST', '/api/auth/signin', lazy('SessionResponse'), input, { on401: 'throw' }));

/** The sign-in form shows its errors inline, next to the fields it asks for. */
export function useSignIn() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: signIn,
    meta: { errors: 'inline' },
    onSuccess: (s) => qc.setQueryData(sessionKeys.all, s),
  });
}
