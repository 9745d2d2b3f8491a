// @vitest-environment jsdom
// Planned freeze windows on the freezes page: a window in force says until when, a later one says when it comes;
// planning sends the environment as the scope and the start and end with their zone; a 400 is shown as is; a
// viewer sees planning disabled with why; deleting sends the reason.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { FreezeWindowDto, FreezeWindowsResponse, SessionResponse } from '../../../../api/schemas.ts';
import { FreezeWindows } from './freeze-windows.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const session = (role: 'oncall' | 'viewer'): SessionResponse => ({
  user: { name: role, source: 'local', groups: [], grants: [{ role, clusters: ['*'], envs: ['*'] }] },
  csrfToken: 'csrf',
  mustChangePassword: false,
  expiresAt: '2099-01-01T00:00:00.000Z',
  oidc: false,
});

const win = (over: Partial<FreezeWindowDto>): FreezeWindowDto => ({
  name: 'holiday',
  reason: 'holiday freeze',
  scope: { clusters: ['prod'], envs: ['prod'] },
  start: '2026-12-20T00:00:00.000Z',
  end: '2027-01-03T00:00:00.000Z',
  createdBy: 'oncall',
  createdAt: '2026-12-01T00:00:00.000Z',
  active: null,
  next: { from: '2026-12-20T00:00:00.000Z', until: '2027-01-03T00:00:00.000Z' },
  apps: [],
  ...over,
});

function renderWindows(windows: FreezeWindowDto[], role: 'oncall' | 'viewer' = 'oncall') {
  const sent: Array<{ path: string; body: unknown }> = [];
  server.use(
    http.get('/api/auth/session', () => HttpResponse.json(session(role))),
    http.get('/api/freeze-windows', () => HttpResponse.json({ windows } satisfies FreezeWindowsResponse)),
    http.post('/api/freeze-windows', async ({ request }) => {
      const body = (await request.json()) as { name: string };
      sent.push({ path: '/api/freeze-windows', body });
      if (body.name === 'bad')
        return HttpResponse.json(
          { error: { code: 'BadRequest', message: 'end: the end is before the start' } },
          { status: 400 },
        );
      return HttpResponse.json({ window: win({ name: body.name }) });
    }),
    http.post('/api/freeze-windows/:name/delete', async ({ request, params }) => {
      sent.push({ path: `/api/freeze-windows/${String(params.name)}/delete`, body: await request.json() });
      return HttpResponse.json({ window: win({ name: String(params.name) }) });
    }),
  );
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <FreezeWindows environments={[{ cluster: 'prod', env: 'prod' }]} />
    </QueryClientProvider>,
  );
  return sent;
}

describe('FreezeWindows', () => {
  it('says until when a window is in force, and when the next one comes', async () => {
    renderWindows([
      win({
        name: 'now',
        active: { from: '2026-12-01T00:00:00.000Z', until: '2026-12-09T00:00:00.000Z', atLeast: false },
      }),
      win({ name: 'later' }),
    ]);
    const items = await screen.findAllByTestId('window-item');
    expect(items.map((i) => i.dataset.name)).toEqual(['now', 'later']);
    expect(within(items[0] as HTMLElement).getByTestId('window-state').dataset.state).toBe('active');
    expect(within(items[0] as HTMLElement).getByTestId('window-state').textContent).toMatch(/in force until/);
    expect(within(items[1] as HTMLElement).getByTestId('window-state').textContent).toMatch(/^next:/);
  });

  it('plans a window for the environment, start and end with their zone; a 400 is shown as is', async () => {
    const sent = renderWindows([]);
    await screen.findByText('No window is planned.');
    fireEvent.change(screen.getByTestId('window-name'), { target: { value: 'bad' } });
    fireEvent.change(screen.getByTestId('window-reason'), { target: { value: 'release stop' } });
    fireEvent.change(screen.getByTestId('window-start'), { target: { value: '2026-12-20T10:00:00' } });
    fireEvent.change(screen.getByTestId('window-end'), { target: { value: '2026-12-20T09:00:00' } });
    await screen.findByRole('button', { name: 'Plan window' }).then((b) => expect(b).toHaveProperty('disabled', false));
    fireEvent.click(screen.getByTestId('window-plan'));
    expect((await screen.findByTestId('window-error')).textContent).toMatch(/end is before the start/);
    expect(sent[0]?.body).toEqual({
      name: 'bad',
      reason: 'release stop',
      scope: { clusters: ['prod'], envs: ['prod'] },
      start: new Date('2026-12-20T10:00:00').toISOString(),
      end: new Date('2026-12-20T09:00:00').toISOString(),
    });
  });

  it('a viewer sees planning disabled, with why; deleting sends the reason', async () => {
    const sent = renderWindows([win({})], 'viewer');
    const item = await screen.findByTestId('window-item');
    await screen.findByText(/oncall/);
    expect(screen.getByTestId('window-plan')).toHaveProperty('disabled', true);
    fireEvent.click(within(item).getByRole('button', { name: 'Delete…' }));
    fireEvent.change(within(item).getByTestId('window-delete-reason'), { target: { value: 'plans changed' } });
    fireEvent.click(within(item).getByRole('button', { name: 'Delete window' }));
    await waitFor(() =>
      expect(sent).toEqual([{ path: '/api/freeze-windows/holiday/delete', body: { reason: 'plans changed' } }]),
    );
  });
});
