import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiSend } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';
import { rememberSession, sessionKeys } from '../../../lib/session.ts';

export type ChangePasswordInput = { current: string; next: string };

/** Answers with the new session (every other session of the user ends); a 401 is for the form: 'throw'. */
export const changePassword = (input: ChangePasswordInput) =>
  rememberSession(apiSend('POST', '/api/auth/password', lazy('SessionResponse'), input, { on401: 'throw' }));

/** Shown inline by the password form; its success is said once the console is open. */
export function useChangePassword() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: changePassword,
    meta: { errors: 'inline', successMessage: 'Your password was changed.' },
    onSuccess: (s) => qc.setQueryData(sessionKeys.all, s),
  });
}
