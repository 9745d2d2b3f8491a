import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiSend, ApiError, setCsrfToken } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

/** Ends the session; a 401 means it had already ended, which is what was asked. */
export async function signOut(): Promise<void> {
  try {
    await apiSend('POST', '/api/auth/signout', lazy('OkResponse'), undefined, { on401: 'throw' });
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) throw e;
  }
  setCsrfToken(undefined);
}

/** Whatever the answer, this browser forgets the user's data (the caller then goes to sign-in). */
export function useSignOut() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: signOut,
    meta: { errorTitle: 'Sign-out failed' },
    onSettled: () => qc.removeQueries(),
  });
}
