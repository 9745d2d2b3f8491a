import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { AppProviders } from './app/providers.tsx';
import { createQueryClient } from './app/query-client.ts';
import { createRouter } from './app/router.tsx';
import { setUnauthenticatedHandler, signInPath } from './lib/api-client.ts';
import { applyThemeChoice, readThemeChoice } from './lib/theme.ts';
import { createToastStore } from './lib/toasts.ts';
import './styles.css';

// the user's light/dark choice before anything renders (no choice: the system setting, by CSS alone)
applyThemeChoice(readThemeChoice());

const toasts = createToastStore();
const queryClient = createQueryClient(toasts);

async function boot() {
  if (import.meta.env.VITE_DEMO === '1') {
    // offline demo only: msw answers /api from fixtures captured from the sandbox
    const { startDemoWorker } = await import('../../mocks/browser.ts');
    await startDemoWorker();
  }
  const root = document.getElementById('root');
  if (!root) throw new Error('no #root');
  const router = createRouter(queryClient);
  // a 401 anywhere: to sign-in within the SPA (no reload), coming back to this page afterwards
  setUnauthenticatedHandler(() => {
    const here = `${window.location.pathname}${window.location.search}`;
    if (!here.startsWith('/signin')) void router.navigate(signInPath(here), { replace: true });
  });
  createRoot(root).render(
    <StrictMode>
      <AppProviders client={queryClient} toasts={toasts}>
        <RouterProvider router={router} />
      </AppProviders>
    </StrictMode>,
  );
}
void boot();
