// @vitest-environment jsdom
// Break-glass on the freezes page (decision 0026): a developer asks for an app of a window in force (its window in
// the path, the reason and minutes in the body); the request lists as waiting for a second person; Approve is for
// on-call only (disabled with why for a developer); an approval the BFF refuses (the requester's own) says why.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { BreakGlassDto, FreezeWindowDto, SessionResponse } from '../../../../api/schemas.ts';
import { BreakGlass } from './break-glass.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const APP = 'prod/flux-system/kustomization/payments';
const session = (role: 'oncall' | 'developer'): SessionResponse => ({
  user: { name: role, source: 'local', groups: [], grants: [{ role, clusters: ['*'], envs: ['*'] }] },
  csrfToken: 'csrf',
  mustChangePassword: false,
  expiresAt: '2099-01-01T00:00:00.000Z',
  oidc: false,
});
const window: FreezeWindowDto = {
  name: 'release-stop',
  reason: 'year end',
  scope: { apps: [APP] },
  createdBy: 'oncall',
  createdAt: '2026-12-01T00:00:00.000Z',
  active: { from: '2026-12-07T10:00:00.000Z', until: '2026-12-07T18:00:00.000Z', atLeast: false },
  next: null,
  apps: [APP],
};
const request: BreakGlassDto = {
  id: '4b6f8a5e-1c1d-4a51-9b7e-0d9a3c2f7e10',
  window: 'release-stop',
  app: APP,
  cluster: 'prod',
  env: 'prod',
  reason: 'CVE hotfix',
  minutes: 15,
  requestedBy: 'developer',
  requestedAt: '2026-12-07T11:00:00.000Z',
  state: 'requested',
  approvedBy: null,
  approvedAt: null,
  until: null,
  occurrenceUntil: '2026-12-07T18:00:00.000Z',
  endedAt: null,
  note: null,
};

function renderAs(role: 'oncall' | 'developer', requests: BreakGlassDto[]) {
  const sent: Array<{ path: string; body: unknown }> = [];
  server.use(
    http.get('/api/auth/session', () => HttpResponse.json(session(role))),
    http.get('/api/freeze-windows', () => HttpResponse.json({ windows: [window] })),
    http.get('/api/break-glass', () => HttpResponse.json({ requests })),
    http.post('/api/freeze-windows/:name/break-glass', async ({ request: r, params }) => {
      sent.push({ path: `/api/freeze-windows/${String(params.name)}/break-glass`, body: await r.json() });
      return HttpResponse.json({ breakGlass: request });
    }),
    http.post('/api/break-glass/:id/approve', ({ params }) => {
      sent.push({ path: `/api/break-glass/${String(params.id)}/approve`, body: null });
      return HttpResponse.json(
        {
          error: {
            code: 'Forbidden',
            message: 'a break-glass needs a second person: you asked for it, someone else with on-call must approve',
          },
        },
        { status: 403 },
      );
    }),
  );
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <BreakGlass />
    </QueryClientProvider>,
  );
  return sent;
}

describe('break-glass on the freezes page', () => {
  it('a developer asks for an app of the window in force; Approve is not theirs', async () => {
    const sent = renderAs('developer', [request]);
    const form = await screen.findByRole('form', { name: 'Ask for a break-glass' });
    fireEvent.change(within(form).getByTestId('breakglass-reason'), { target: { value: 'CVE hotfix' } });
    fireEvent.change(within(form).getByTestId('breakglass-minutes'), { target: { value: '20' } });
    fireEvent.click(within(form).getByTestId('breakglass-ask'));
    await waitFor(() => expect(within(form).getByRole('status').textContent).toMatch(/second person/));
    expect(sent).toEqual([
      {
        path: '/api/freeze-windows/release-stop/break-glass',
        body: { app: APP, reason: 'CVE hotfix', minutes: 20 },
      },
    ]);
    const item = screen.getByTestId('breakglass-item');
    expect(item.getAttribute('data-state')).toBe('requested');
    expect(within(item).getByTestId('breakglass-state').textContent).toBe('waiting for a second person');
    await waitFor(() => expect(within(item).getByTestId('breakglass-approve')).toHaveProperty('disabled', true));
    expect(within(item).getByTestId('breakglass-approve').getAttribute('title')).toMatch(/oncall/);
  });

  it('on-call approves; a refusal (the requester’s own) is shown as the BFF says it', async () => {
    const sent = renderAs('oncall', [request]);
    const item = await screen.findByTestId('breakglass-item');
    await waitFor(() => expect(within(item).getByTestId('breakglass-approve')).toHaveProperty('disabled', false));
    fireEvent.click(within(item).getByTestId('breakglass-approve'));
    await waitFor(() =>
      expect(within(item).getByTestId('breakglass-approve-error').textContent).toMatch(/needs a second person/),
    );
    expect(sent.map((s) => s.path)).toEqual([`/api/break-glass/${request.id}/approve`]);
  });
});
