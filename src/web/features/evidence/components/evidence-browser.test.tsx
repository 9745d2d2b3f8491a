// @vitest-environment jsdom
// (text queries, not role queries, on the pages of 50 rows: jsdom's role queries are slow on a loaded machine)
// The evidence browser: filters kept in the URL and sent to the API, keyset paging with "Load older", an
// event's detail, "Verify chain" for evidence.verify holders only, and exports of the current filters.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { SessionResponse } from '../../../../api/schemas.ts';
import type { Role } from '../../../../domain/access.ts';
import { apiParams, exportHref, filtersFromSearch, localToIso } from '../lib/evidence-filters.ts';
import { EvidenceBrowser } from './evidence-browser.tsx';

const server = setupServer(...handlers);
beforeAll(() => {
  server.listen({ onUnhandledRequest: 'error' });
});
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

const session = (role: Role) =>
  http.get('/api/auth/session', () =>
    HttpResponse.json({
      user: { name: role, source: 'local', groups: [], grants: [{ role, clusters: ['*'], envs: ['*'] }] },
      csrfToken: 't',
      mustChangePassword: false,
      expiresAt: '2099-01-01T00:00:00.000Z',
      oidc: false,
    } satisfies SessionResponse),
  );

const event = (seq: number) => ({
  seq,
  time: new Date(Date.UTC(2026, 0, 1, 0, seq)).toISOString(),
  type: 'app.revision-observed' as const,
  actor: 'kustomize-controller',
  app: 'nonprod/flux-system/kustomization/app',
  cluster: 'nonprod',
  env: 'dev',
  data: { revision: `main@sha1:${String(seq).padStart(40, '0')}` },
  prevHash: `prev-${seq}`,
  hash: `hash-${seq}`,
});

/** 120 events, pages of `limit` below `before`; records every query string the browser sent */
function evidenceApi() {
  const queries: URLSearchParams[] = [];
  server.use(
    http.get('/api/evidence', ({ request }) => {
      const sp = new URL(request.url).searchParams;
      queries.push(sp);
      const before = Number(sp.get('before') ?? 121);
      const limit = Number(sp.get('limit'));
      const events = Array.from({ length: Math.min(limit, before - 1) }, (_, i) => event(before - 1 - i));
      return HttpResponse.json({ events, nextCursor: before - 1 - limit > 0 ? events.at(-1)?.seq : null });
    }),
  );
  return queries;
}

function renderAt(url: string) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const router = createMemoryRouter([{ path: '/evidence', element: <EvidenceBrowser /> }], { initialEntries: [url] });
  render(
    <QueryClientProvider client={qc}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return router;
}

describe('evidence filters', () => {
  it('reads the URL, sends times as ISO UTC, and builds the export links', () => {
    const f = filtersFromSearch(new URLSearchParams('env=dev&q=+rollback+&from=2026-01-31T14:05&unknown=1&app='));
    expect(f).toEqual({ env: 'dev', q: 'rollback', from: '2026-01-31T14:05' });
    expect(apiParams(f, { limit: 50, before: undefined })).toBe(
      `env=dev&from=${encodeURIComponent(localToIso('2026-01-31T14:05') ?? '')}&q=rollback&limit=50`,
    );
    expect(exportHref({ type: 'auth.failed' }, 'csv')).toBe('/api/evidence/export?type=auth.failed&format=csv');
    expect(localToIso('not a time')).toBeUndefined();
  });
});

describe('EvidenceBrowser', { timeout: 20_000 }, () => {
  it('takes its filters from the URL and pages with "Load older"', async () => {
    server.use(session('auditor'));
    const queries = evidenceApi();
    renderAt('/evidence?env=dev&type=app.revision-observed');
    await waitFor(() => expect(screen.getAllByTestId('evidence-row')).toHaveLength(50));
    expect(queries[0]?.get('env')).toBe('dev');
    expect(queries[0]?.get('type')).toBe('app.revision-observed');
    expect(queries[0]?.get('before')).toBeNull();
    expect((screen.getByLabelText('Environment') as HTMLInputElement).value).toBe('dev');
    expect((screen.getByLabelText('Type') as HTMLSelectElement).value).toBe('app.revision-observed');
    fireEvent.click(screen.getByText('Load older'));
    await waitFor(() => expect(screen.getAllByTestId('evidence-row')).toHaveLength(100));
    expect(queries[1]?.get('before')).toBe('71');
    expect(queries[1]?.get('env')).toBe('dev');
    fireEvent.click(screen.getByText('Load older'));
    await waitFor(() => expect(screen.getAllByTestId('evidence-row')).toHaveLength(120));
    expect(screen.queryByText('Load older')).toBeNull();
    expect(screen.getByText('The oldest event is shown.')).toBeTruthy();
  });

  it('applying the form puts the filters into the URL and the API query', async () => {
    server.use(session('auditor'));
    const queries = evidenceApi();
    const router = renderAt('/evidence');
    await screen.findAllByTestId('evidence-row');
    fireEvent.change(screen.getByLabelText('Search (actor, type, app, data)'), { target: { value: 'rollback' } });
    fireEvent.change(screen.getByLabelText('Actor'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByLabelText('Type'), { target: { value: 'auth.failed' } });
    fireEvent.click(screen.getByText('Apply'));
    await waitFor(() => expect(router.state.location.search).toBe('?actor=alice&type=auth.failed&q=rollback'));
    await waitFor(() => expect(queries.at(-1)?.get('q')).toBe('rollback'));
    expect(queries.at(-1)?.get('actor')).toBe('alice');
    const jsonl = screen.getByText('Export JSONL');
    expect(jsonl.getAttribute('href')).toBe(
      '/api/evidence/export?actor=alice&type=auth.failed&q=rollback&format=jsonl',
    );
    fireEvent.click(screen.getByText('Clear'));
    await waitFor(() => expect(router.state.location.search).toBe(''));
    expect((screen.getByLabelText('Actor') as HTMLInputElement).value).toBe('');
  });

  it("an event's detail shows its seq, hash, previous hash and data", async () => {
    server.use(session('auditor'));
    evidenceApi();
    renderAt('/evidence');
    const [first] = await screen.findAllByTestId('evidence-row');
    const toggle = within(first!).getByRole('button', { name: 'Show details of event #120' });
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(toggle);
    const detail = screen.getByTestId('evidence-detail');
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(toggle.getAttribute('aria-controls')).toBe(detail.id); // only while the detail exists
    expect(within(detail).getByText('hash-120')).toBeTruthy();
    expect(within(detail).getByText('prev-120')).toBeTruthy();
    expect(detail.textContent).toContain('"revision": "main@sha1:');
  });

  it('"Verify chain" names the first broken link; only evidence.verify holders see it', async () => {
    server.use(
      session('auditor'),
      http.get('/api/evidence/verify', () =>
        HttpResponse.json({
          ok: false,
          count: 41,
          brokenAt: 42,
          reason: 'event 42 content does not match its hash',
        }),
      ),
    );
    evidenceApi();
    renderAt('/evidence');
    fireEvent.click(await screen.findByRole('button', { name: 'Verify chain' }));
    await waitFor(() =>
      expect(screen.getByTestId('verify-result').textContent).toBe(
        'Chain broken at event 42: event 42 content does not match its hash',
      ),
    );
    cleanup();
    server.use(session('reviewer'));
    renderAt('/evidence');
    await screen.findAllByTestId('evidence-row');
    expect(screen.queryByRole('button', { name: 'Verify chain' })).toBeNull();
  });

  it('says why when the user may not read evidence', async () => {
    server.use(session('viewer'));
    renderAt('/evidence');
    expect(await screen.findByText(/verify|evidence/i, { selector: 'p' })).toBeTruthy();
    expect(screen.queryByTestId('evidence-table')).toBeNull();
    // no export links: the server would answer 403, downloaded as export.json
    expect(screen.queryAllByTestId('export')).toHaveLength(0);
    cleanup();
    server.use(session('reviewer'));
    renderAt('/evidence');
    expect((await screen.findAllByTestId('export')).map((a) => a.textContent)).toEqual([
      'Export JSONL',
      'Export CSV',
      'Export manifests',
    ]);
  });
});
