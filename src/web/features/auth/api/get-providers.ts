import { queryOptions } from '@tanstack/react-query';
import { ProvidersResponse } from '../../../../api/schemas.ts';
import { apiGet } from '../../../lib/api-client.ts';

export const authKeys = { providers: ['auth-providers'] as const };

/** Public: which sign-in methods exist (shown on the sign-in page, so a 401 only throws). */
export const getProviders = (signal?: AbortSignal) =>
  apiGet('/api/auth/providers', ProvidersResponse, { signal, on401: 'throw' });

export const providersQueryOptions = () =>
  queryOptions({ queryKey: authKeys.providers, queryFn: ({ signal }) => getProviders(signal), staleTime: Infinity });
