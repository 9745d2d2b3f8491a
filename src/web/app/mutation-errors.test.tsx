// @vitest-environment jsdom
// One error surface: mutation errors reach the user once, as a toast fed by the MutationCache (with the
// request id of a 5xx); a refused action (503 EvidenceUnavailable) re-reads the evidence store's health at
// once; the sign-in form keeps its errors inline (and its 401 does not redirect).
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import type { ReactNode } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { appsFixture, handlers } from '../../../mocks/handlers.ts';
import { appPath, type HealthzResponse, type SessionResponse } from '../../api/schemas.ts';
import { formatLocalTime } from '../components/time.tsx';
import { ReconcileButton } from '../features/apps/components/reconcile-button.tsx';
import { SignInPage } from '../features/auth/components/sign-in-page.tsx';
import { EvidenceBanner } from '../features/evidence/components/evidence-banner.tsx';
import { setUnauthenticatedHandler } from '../lib/api-client.ts';
import { createToastStore } from '../lib/toasts.ts';
import { AppProviders } from './providers.tsx';
import { createQueryClient } from './query-client.ts';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const toSignIn = vi.fn();
beforeEach(() => {
  toSignIn.mockReset();
  setUnauthenticatedHandler(toSignIn);
});

const app = appsFixture.apps.find((a) => a.env === 'dev' && a.controller === 'flux')!;
const reconcileUrl = `/api/apps/${appPath(app.id)}/reconcile`;
const developer = () =>
  http.get('/api/auth/session', () =>
    HttpResponse.json({
      user: { name: 'dev', source: 'local', groups: [], grants: [{ role: 'developer', clusters: ['*'], envs: ['*'] }] },
      csrfToken: 't',
      mustChangePassword: false,
      expiresAt: '2099-01-01T00:00:00.000Z',
      oidc: false,
    } satisfies SessionResponse),
  );

function renderWithProviders(ui: ReactNode) {
  const toasts = createToastStore();
  const client = createQueryClient(toasts, { queries: { retry: false } });
  render(
    <AppProviders client={client} toasts={toasts}>
      {ui}
    </AppProviders>,
  );
  return { client, toasts };
}

async function clickReconcile() {
  const button = (await screen.findByTestId('reconcile')) as HTMLButtonElement;
  await waitFor(() => expect(button.disabled).toBe(false));
  fireEvent.click(button);
}

describe('mutation errors', () => {
  it('a 5xx shows once, as a toast with the request id; the button itself shows no error', async () => {
    server.use(
      developer(),
      http.post(reconcileUrl, () =>
        HttpResponse.json(
          { error: { code: 'Internal', message: 'the console failed; see its log', requestId: 'req-7f3a' } },
          { status: 500 },
        ),
      ),
    );
    renderWithProviders(<ReconcileButton app={app} />);
    await clickReconcile();
    const toast = await screen.findByRole('alert');
    expect(toast.textContent).toContain('Reconcile failed');
    expect(toast.textContent).toContain('the console failed; see its log');
    expect(within(toast).getByTestId('toast-request-id').textContent).toBe('Request id req-7f3a');
    expect(screen.getAllByRole('alert')).toHaveLength(1);
    expect(screen.queryByText(/requested at/)).toBeNull();
  });

  it('a 4xx shows its message without a request id; Dismiss (a button, reachable by Tab) removes it', async () => {
    server.use(
      developer(),
      http.post(reconcileUrl, () =>
        HttpResponse.json({ error: { code: 'Forbidden', message: 'needs the developer role' } }, { status: 403 }),
      ),
    );
    renderWithProviders(<ReconcileButton app={app} />);
    await clickReconcile();
    const toast = await screen.findByRole('alert');
    expect(toast.textContent).toContain('needs the developer role');
    expect(within(toast).queryByTestId('toast-request-id')).toBeNull();
    const dismiss = within(toast).getByRole('button', { name: 'Dismiss: Reconcile failed' });
    dismiss.focus();
    expect(document.activeElement).toBe(dismiss);
    fireEvent.click(dismiss);
    await waitFor(() => expect(screen.queryByRole('alert')).toBeNull());
  });

  it('Escape inside a toast dismisses it', async () => {
    server.use(
      developer(),
      http.post(reconcileUrl, () =>
        HttpResponse.json({ error: { code: 'Conflict', message: 'busy' } }, { status: 409 }),
      ),
    );
    renderWithProviders(<ReconcileButton app={app} />);
    await clickReconcile();
    const toast = await screen.findByRole('alert');
    fireEvent.keyDown(within(toast).getByRole('button'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('alert')).toBeNull());
  });

  it('a success is shown by the button (no toast)', async () => {
    server.use(
      developer(),
      http.post(reconcileUrl, () => HttpResponse.json({ requestedAt: '2026-12-01T10:11:12.000Z', objects: [app.id] })),
    );
    renderWithProviders(<ReconcileButton app={app} />);
    await clickReconcile();
    // the time of day in the user's zone, with the zone (UTC in the tooltip)
    const at = await screen.findByText(/requested at/);
    expect(at.textContent).toBe(`requested at ${formatLocalTime('2026-12-01T10:11:12.000Z')}`);
    expect(at.querySelector('time')?.getAttribute('title')).toBe('2026-12-01 10:11:12 UTC');
    expect(screen.queryAllByTestId('toast')).toHaveLength(0);
  });

  it('a refused action (503 EvidenceUnavailable) re-reads /healthz at once: the banner shows without waiting for the poll', async () => {
    let failing = false;
    let healthReads = 0;
    server.use(
      developer(),
      http.get('/healthz', () => {
        healthReads++;
        return HttpResponse.json({
          ok: true,
          evidence: { pending: failing ? 2 : 0, failing, refused: failing ? 1 : 0 },
        } satisfies HealthzResponse);
      }),
      http.post(reconcileUrl, () => {
        failing = true;
        return HttpResponse.json(
          { error: { code: 'EvidenceUnavailable', message: 'not recorded, so not done', requestId: 'req-1' } },
          { status: 503 },
        );
      }),
    );
    renderWithProviders(
      <>
        <EvidenceBanner />
        <ReconcileButton app={app} />
      </>,
    );
    await waitFor(() => expect(healthReads).toBe(1));
    expect(screen.queryByTestId('evidence-banner')).toBeNull();
    await clickReconcile();
    const banner = await screen.findByTestId('evidence-banner');
    expect(healthReads).toBe(2);
    expect(banner.textContent).toBe(
      'The evidence store is not accepting records: 2 records waiting. Actions are refused until it is back; nothing is lost.',
    );
    // the toast says what happened to this action, the banner why
    expect(screen.getByTestId('toast').textContent).toContain('not recorded, so not done');
  });
});

describe('the sign-in form', () => {
  function renderSignIn() {
    const router = createMemoryRouter([{ path: '/signin', element: <SignInPage /> }], { initialEntries: ['/signin'] });
    return renderWithProviders(<RouterProvider router={router} />);
  }

  it('keeps a wrong password inline (one alert, no toast) and does not redirect on its 401', async () => {
    server.use(
      http.post('/api/auth/signin', () =>
        HttpResponse.json(
          { error: { code: 'BadCredentials', message: 'wrong user name or password' } },
          { status: 401 },
        ),
      ),
    );
    renderSignIn();
    fireEvent.change(await screen.findByLabelText('User name'), { target: { value: 'viewer' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'nope' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe('wrong user name or password');
    expect(screen.getAllByRole('alert')).toHaveLength(1);
    expect(screen.queryAllByTestId('toast')).toHaveLength(0);
    expect(toSignIn).not.toHaveBeenCalled();
  });

  it('a one-time password leads to the password form; a changed password is confirmed by a success toast', async () => {
    const session = (mustChangePassword: boolean) =>
      ({
        user: { name: 'admin', source: 'local', groups: [], grants: [] },
        csrfToken: 't',
        mustChangePassword,
        expiresAt: '2099-01-01T00:00:00.000Z',
        oidc: false,
      }) satisfies SessionResponse;
    server.use(
      http.post('/api/auth/signin', () => HttpResponse.json(session(true))),
      http.post('/api/auth/password', () => HttpResponse.json(session(false))),
    );
    const router = createMemoryRouter(
      [
        { path: '/signin', element: <SignInPage /> },
        { path: '/', element: <p>console</p> },
      ],
      { initialEntries: ['/signin'] },
    );
    renderWithProviders(<RouterProvider router={router} />);
    fireEvent.change(await screen.findByLabelText('User name'), { target: { value: 'admin' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'one-time-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    fireEvent.change(await screen.findByLabelText('New password'), { target: { value: 'a-new-password-1' } });
    fireEvent.change(screen.getByLabelText('Repeat the new password'), { target: { value: 'a-new-password-1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set password and continue' }));
    await screen.findByText('console');
    expect(within(screen.getByRole('status')).getByTestId('toast').textContent).toContain('Your password was changed.');
  });
});
