import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { ProvidersResponse, SessionResponse } from '../../../../api/schemas.ts';
import { apiGet, apiSend, setCsrfToken } from '../../../lib/api-client.ts';

export const sessionKeys = { all: ['session'] as const, providers: ['auth-providers'] as const };

async function remember(p: Promise<SessionResponse>): Promise<SessionResponse> {
  const s = await p;
  setCsrfToken(s.csrfToken);
  return s;
}

export const sessionQueryOptions = () =>
  queryOptions({
    queryKey: sessionKeys.all,
    queryFn: ({ signal }) => remember(apiGet('/api/auth/session', SessionResponse, signal)),
    staleTime: 60_000,
    retry: false,
  });

export const providersQueryOptions = () =>
  queryOptions({
    queryKey: sessionKeys.providers,
    queryFn: ({ signal }) => apiGet('/api/auth/providers', ProvidersResponse, signal),
    staleTime: Infinity,
  });

export const signIn = (username: string, password: string) =>
  remember(apiSend('POST', '/api/auth/signin', SessionResponse, { username, password }));

export const changePassword = (current: string, next: string) =>
  remember(apiSend('POST', '/api/auth/password', SessionResponse, { current, next }));

export const signOut = async () => {
  await apiSend('POST', '/api/auth/signout', z.object({ ok: z.boolean() }));
  setCsrfToken(undefined);
};
