// @vitest-environment jsdom
// UI unit test: the overview against msw handlers typed by the API schemas
// (fixtures captured from the real sandbox by scripts/capture-fixtures.ts).
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appsFixture, handlers } from '../../../../../mocks/handlers.ts';
import type { AppSummary } from '../../../../api/schemas.ts';
import { AppOverview } from './app-overview.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

function renderAt(url: string) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const router = createMemoryRouter([{ path: '/', element: <AppOverview /> }], { initialEntries: [url] });
  render(
    <QueryClientProvider client={qc}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return router;
}

/** `n` healthy dev apps on nonprod named many-000…, from a fixture app without drift or freeze */
function manyApps(n: number, over: (i: number) => Partial<AppSummary> = () => ({})): AppSummary[] {
  const base = appsFixture.apps.find((a) => a.env === 'dev' && a.health === 'Healthy') ?? appsFixture.apps[0];
  if (!base) throw new Error('no fixture app');
  const { drift: _d, freeze: _f, ...plain } = base;
  return Array.from({ length: n }, (_, i) => ({
    ...plain,
    id: `nonprod/flux-system/kustomization/many-${String(i).padStart(3, '0')}`,
    name: `many-${String(i).padStart(3, '0')}`,
    env: 'dev',
    cluster: 'nonprod',
    ...over(i),
  }));
}

describe('AppOverview', () => {
  it('groups apps into env columns in the configured order', async () => {
    renderAt('/');
    await waitFor(() => expect(screen.getAllByTestId('app-card')).toHaveLength(appsFixture.apps.length));
    const envs = screen.getAllByTestId('env-column').map((c) => c.getAttribute('data-env'));
    expect(envs).toEqual(['dev', 'staging', 'prod']);
    const prod = screen.getAllByTestId('env-column')[2] as HTMLElement;
    expect(within(prod).getAllByTestId('app-card')).toHaveLength(
      appsFixture.apps.filter((a) => a.env === 'prod').length,
    );
  });

  it('a group of 150 apps paints 24 cards, the unhealthy one among them; "Show more" paints the rest', async () => {
    const many = manyApps(150, (i) => ({
      health: i === 149 ? ('Degraded' as const) : ('Healthy' as const),
      sync: 'Synced' as const,
    }));
    server.use(http.get('/api/apps', () => HttpResponse.json({ ...appsFixture, apps: many, total: many.length })));
    renderAt('/');
    await waitFor(() => expect(screen.getAllByTestId('app-card')).toHaveLength(24));
    // the last by name, but Degraded: painted first
    expect(screen.getAllByTestId('app-card')[0]?.getAttribute('data-app-id')).toMatch(/many-149$/);
    const more = screen.getByTestId('show-more');
    expect(more.textContent).toMatch(/Show 126 more of 126 in dev · nonprod/);
    more.click();
    await waitFor(() => expect(screen.getAllByTestId('app-card')).toHaveLength(150));
    expect(screen.queryByTestId('show-more')).toBeNull();
    expect(screen.getByTestId('app-count').textContent).toContain('150 of 150');
  });

  it("paints each group's first cards from the first answer, then reads the whole list for the rest", async () => {
    const many = manyApps(60);
    const asked: string[] = [];
    let releaseFull: () => void = () => undefined;
    const fullHeld = new Promise<void>((r) => (releaseFull = r));
    server.use(
      http.get('/api/apps', async ({ request }) => {
        const first = new URL(request.url).searchParams.get('first');
        asked.push(first ? `first=${first}` : 'all');
        if (first)
          return HttpResponse.json({
            apps: many.slice(0, Number(first)),
            total: 60,
            envs: ['dev'],
            partial: true,
            groups: [{ env: 'dev', cluster: 'nonprod', count: 60 }],
          });
        await fullHeld;
        return HttpResponse.json({ apps: many, total: 60, envs: ['dev'] });
      }),
    );
    renderAt('/');
    await waitFor(() => expect(screen.getAllByTestId('app-card')).toHaveLength(24));
    // the group's size comes from the first answer, before the whole list is in
    expect(screen.getByTestId('app-count').textContent).toBe('60 of 60 apps');
    expect(screen.getByTestId('show-more').textContent).toMatch(/Show 36 more of 36 in dev · nonprod/);
    await waitFor(() => expect(asked).toEqual(['first=24', 'all']));
    screen.getByTestId('show-more').click();
    expect((await screen.findByText(/Loading the rest of dev · nonprod/)).textContent).toBe(
      'Loading the rest of dev · nonprod…',
    );
    releaseFull();
    await waitFor(() => expect(screen.getAllByTestId('app-card')).toHaveLength(60));
    expect(screen.getByTestId('app-count').textContent).toBe('60 of 60 apps');
  });

  it('a URL with filters reads the whole list at once (a first page could not answer the search)', async () => {
    const asked: string[] = [];
    server.use(
      http.get('/api/apps', ({ request }) => {
        asked.push(new URL(request.url).search);
        return HttpResponse.json(appsFixture);
      }),
    );
    renderAt('/?controller=argocd');
    await screen.findAllByTestId('app-card');
    expect(asked).toEqual(['']);
  });

  it('reads filters from the URL', async () => {
    renderAt('/?controller=argocd');
    await waitFor(() =>
      expect(screen.getAllByTestId('app-card')).toHaveLength(
        appsFixture.apps.filter((a) => a.controller === 'argocd').length,
      ),
    );
    expect(screen.getByTestId('app-count').textContent).toContain(`of ${appsFixture.total}`);
  });

  it('the search box keeps what was typed while the URL follows; a change of the URL itself wins', async () => {
    const router = renderAt('/');
    await waitFor(() => expect(screen.getAllByTestId('app-card')).toHaveLength(appsFixture.apps.length));
    const one = appsFixture.apps[0]!;
    const box = screen.getByRole('textbox', { name: 'Search apps' });
    // typed faster than the router's navigations: no await between the keystrokes
    fireEvent.change(box, { target: { value: one.name.slice(0, 1) } });
    fireEvent.change(box, { target: { value: one.name } });
    expect((box as HTMLInputElement).value).toBe(one.name);
    expect(screen.getAllByTestId('app-card').map((c) => c.getAttribute('data-app-id'))).toContain(one.id);
    expect(screen.getAllByTestId('app-card').length).toBe(
      appsFixture.apps.filter((a) => a.name.includes(one.name)).length,
    );
    // the URL follows, and its echoes of the first keystroke do not move the text back
    await waitFor(() => expect(router.state.location.search).toBe(`?q=${encodeURIComponent(one.name)}`));
    expect((box as HTMLInputElement).value).toBe(one.name);
    // a change of the URL itself (back to the unfiltered overview) wins
    await act(() => router.navigate('/'));
    expect((box as HTMLInputElement).value).toBe('');
    expect(screen.getAllByTestId('app-card')).toHaveLength(appsFixture.apps.length);
  });

  it('shows the stale banner for an unreachable cluster', async () => {
    server.use(
      http.get('/api/clusters', () =>
        HttpResponse.json({
          clusters: [
            {
              name: 'prod',
              server: 'https://127.0.0.1:1',
              status: 'unreachable',
              since: '2026-11-30T12:00:00Z',
              staleSince: '2026-11-30T12:00:00Z',
              reason: 'connect ECONNREFUSED',
              kinds: {},
            },
          ],
        }),
      ),
    );
    renderAt('/');
    await screen.findByTestId('stale-banner');
    expect(screen.getByTestId('stale-banner').textContent).toContain('Cluster prod is unreachable');
  });

  it('says so when the BFF answers with an error', async () => {
    server.use(
      http.get('/api/apps', () => HttpResponse.json({ error: { code: 'Internal', message: 'boom' } }, { status: 500 })),
    );
    renderAt('/');
    expect((await screen.findByText(/Cannot load apps: boom/)).textContent).toBe('Cannot load apps: boom');
  });

  it('a cluster the user cannot see stays shown in the filter, and the empty state says why', async () => {
    renderAt('/?cluster=elsewhere');
    const msg = await screen.findByTestId('no-apps');
    expect(msg.textContent).toMatch(/cluster elsewhere: you have no role on it/);
    expect((screen.getByLabelText('Cluster') as HTMLSelectElement).value).toBe('elsewhere');
    expect(screen.queryAllByTestId('app-card')).toHaveLength(0);
  });

  it('filters that match nothing say so', async () => {
    renderAt('/?q=no-such-app-anywhere');
    expect((await screen.findByTestId('no-apps')).textContent).toBe('No apps match these filters.');
  });
});

describe('AppOverview: planned freeze windows on the cards (issue 43)', () => {
  it('a covered app says when its next window starts; one frozen by a window names it; others say nothing', async () => {
    const soon = new Date(Date.now() + 3_600_000).toISOString();
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const inAWeek = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const apps = manyApps(3, (i) =>
      i === 1
        ? { freeze: { id: 'f1', by: 'console (window year-end)', reason: 'year-end: holidays', until: inAWeek } }
        : {},
    );
    const window = (name: string, covers: string[], over: object) => ({
      name,
      reason: 'r',
      scope: { apps: covers },
      createdBy: 'oncall',
      createdAt: new Date().toISOString(),
      active: null,
      next: null,
      apps: covers,
      ...over,
    });
    server.use(
      http.get('/api/apps', () => HttpResponse.json({ ...appsFixture, apps, total: apps.length })),
      http.get('/api/freeze-windows', () =>
        HttpResponse.json({
          windows: [
            window('release-stop', [apps[0]?.id ?? ''], { next: { from: later, until: inAWeek } }),
            // the earlier of two windows is the one the card names
            window('db-upgrade', [apps[0]?.id ?? ''], { next: { from: soon, until: later } }),
            window('year-end', [apps[1]?.id ?? ''], { active: { from: soon, until: inAWeek, atLeast: false } }),
          ],
        }),
      ),
    );
    renderAt('/');
    const card = (i: number) =>
      screen.getAllByTestId('app-card').find((c) => c.getAttribute('data-app-id') === apps[i]?.id) as HTMLElement;
    await waitFor(() => expect(within(card(0)).getByTestId('card-window').textContent).toMatch(/db-upgrade/));
    expect(within(card(0)).getByTestId('card-window').textContent).toMatch(/^next window .+ \(db-upgrade\)$/);
    // frozen by the window in force: the badge names it, and no second line
    expect(within(card(1)).getByTestId('frozen').textContent).toMatch(/Frozen until \d{4}-.+ \(window year-end\)$/);
    expect(within(card(1)).queryByTestId('card-window')).toBeNull();
    expect(within(card(2)).queryByTestId('card-window')).toBeNull();
  });
});
