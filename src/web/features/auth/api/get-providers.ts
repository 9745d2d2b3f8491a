import { queryOptions } from '@tanstack/react-query';
import { apiGet } from '../../../lib/api-client.ts';
import { lazy } from '../../../lib/lazy-parsers.ts';

export const authKeys = { providers: ['auth-providers'] as const };

/** Public: which sign-in methods exist (shown on the sign-in page, so a 401 only throws). */
export const getProviders = (signal?: AbortSignal) =>
  apiGet('/api/auth/providers', lazy('ProvidersResponse'), { signal, on401: 'throw' });

export const providersQueryOptions = () =>
  queryOptions({ queryKey: authKeys.providers, queryFn: ({ signal }) => getProviders(signal), staleTime: Infinity });
