// The signed-in user's session: read by the router (every page needs one), the permission hook, the live
// stream and the sign-in feature. Its 401 is an answer ("not signed in"), not a lost session: 'throw'.
import { queryOptions } from '@tanstack/react-query';
import type { SessionResponse } from '../../api/schemas.ts';
import { apiGet, setCsrfToken } from './api-client.ts';
import { lazy } from './lazy-parsers.ts';

export const sessionKeys = { all: ['session'] as const };

/** Keeps the session's CSRF token for the mutations that follow; returns the session. */
export async function rememberSession(p: Promise<SessionResponse>): Promise<SessionResponse> {
  const s = await p;
  setCsrfToken(s.csrfToken);
  return s;
}

export const getSession = (signal?: AbortSignal) =>
  rememberSession(apiGet('/api/auth/session', lazy('SessionResponse'), { signal, on401: 'throw' }));

export const sessionQueryOptions = () =>
  queryOptions({
    queryKey: sessionKeys.all,
    queryFn: ({ signal }) => getSession(signal),
    staleTime: 60_000,
    retry: false,
  });
