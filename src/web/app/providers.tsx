import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ToastRegion } from '../components/toast-region.tsx';
import type { ToastStore } from '../lib/toasts.ts';

/** The query cache and the one notification surface, around every page (sign-in included). */
export function AppProviders({
  client,
  toasts,
  children,
}: {
  client: QueryClient;
  toasts: ToastStore;
  children: ReactNode;
}) {
  return (
    <QueryClientProvider client={client}>
      {children}
      <ToastRegion store={toasts} />
    </QueryClientProvider>
  );
}
