// The app's QueryClient: one error surface for every mutation (a toast, with the request id of a 5xx),
// and a refused action (503 EvidenceUnavailable) re-reads the evidence store's health at once.
import { MutationCache, QueryCache, QueryClient, type DefaultOptions } from '@tanstack/react-query';
import { EVIDENCE_UNAVAILABLE } from '../../api/plain.ts';
import { evidenceKeys } from '../features/evidence/api/evidence-queries.ts';
import { ApiError, shouldRetry } from '../lib/api-client.ts';
import type { ConsoleMutationMeta } from '../lib/mutation-meta.ts';
import type { ToastInput, ToastStore } from '../lib/toasts.ts';

export const isEvidenceUnavailable = (e: unknown): boolean =>
  e instanceof ApiError && e.status === 503 && e.code === EVIDENCE_UNAVAILABLE;

/** The toast for a failed mutation, or none (a form showing its errors inline; a 401, already at sign-in). */
export function mutationErrorToast(error: Error, meta: ConsoleMutationMeta | undefined): ToastInput | undefined {
  if (meta?.errors === 'inline') return undefined;
  // a 401 has sent the user to sign-in already (apiRequest's default): that page says what to do
  if (error instanceof ApiError && error.status === 401) return undefined;
  const requestId = error instanceof ApiError && error.status >= 500 ? error.requestId : undefined;
  return {
    tone: 'error',
    title: meta?.errorTitle ?? 'The action failed',
    message: error.message,
    ...(requestId ? { requestId } : {}),
  };
}

export function createQueryClient(toasts: ToastStore, defaults: DefaultOptions = {}): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({
      onError: (err) => console.warn('query failed:', err.message),
    }),
    mutationCache: new MutationCache({
      onError: (error, _vars, _ctx, mutation, { client }) => {
        if (isEvidenceUnavailable(error)) void client.invalidateQueries({ queryKey: evidenceKeys.health() });
        const toast = mutationErrorToast(error, mutation.meta);
        if (toast) toasts.push(toast);
      },
      onSuccess: (_data, _vars, _ctx, mutation) => {
        const message = mutation.meta?.successMessage;
        if (message) toasts.push({ tone: 'success', title: message });
      },
    }),
    defaultOptions: {
      ...defaults,
      queries: { retry: shouldRetry, staleTime: 30_000, refetchOnWindowFocus: false, ...defaults.queries },
    },
  });
}
