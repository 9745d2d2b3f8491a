// @vitest-environment jsdom
// The environment calendar (issue 43): it asks the BFF for whole local days from last week's Monday, and places
// each entry on the days it covers (six a day, a button for the rest) (a planned window, an Argo CD deny window, a freeze naming its window, a release
// linking to its app); a source the BFF could not read is an alert, not an empty day; a reader without a role in
// the environment is told why and nothing is asked.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { MemoryRouter } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { EnvCalendarResponse, SessionResponse } from '../../../../api/schemas.ts';
import { EnvCalendar } from './env-calendar.tsx';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
  vi.useRealTimers();
});
afterAll(() => server.close());

const local = (d: number, h = 0, m = 0) => new Date(2026, 11, d, h, m).toISOString(); // December 2026
const APP = 'prod/flux-system/kustomization/payments';
const session = (envs: string[]): SessionResponse => ({
  user: { name: 'viewer', source: 'local', groups: [], grants: [{ role: 'viewer', clusters: ['*'], envs }] },
  csrfToken: 'csrf',
  mustChangePassword: false,
  expiresAt: '2099-01-01T00:00:00.000Z',
  oidc: false,
});

function show(envs: string[], answer: EnvCalendarResponse, asked: URL[] = []) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(2026, 11, 9, 15, 0)); // Wednesday 9 December, 15:00 local
  server.use(
    http.get('/api/auth/session', () => HttpResponse.json(session(envs))),
    http.get('/api/envs/:env/calendar', ({ request }) => {
      asked.push(new URL(request.url));
      return HttpResponse.json(answer);
    }),
  );
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <EnvCalendar env="prod" />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const answer: EnvCalendarResponse = {
  env: 'prod',
  from: new Date(2026, 10, 30).toISOString(),
  to: local(40),
  entries: [
    { type: 'release', app: APP, sha: 'abcdef1234567', at: local(8, 14, 2), failed: false },
    { type: 'window', name: 'holiday', reason: 'year end', from: local(20, 0), until: local(22, 12), apps: [APP] },
    {
      type: 'sync-window',
      cluster: 'prod',
      project: 'shop',
      kind: 'deny',
      label: 'nightly batch',
      schedule: '0 22 * * *',
      duration: '2h',
      manualSync: false,
      from: local(10, 22),
      until: local(11, 0),
      apps: [APP],
    },
    {
      type: 'freeze',
      id: 'f1',
      reason: 'holiday: year end',
      createdBy: 'console (window holiday)',
      window: 'holiday',
      from: local(20, 0),
      until: local(22, 12),
      active: false,
      apps: [APP],
    },
  ],
  unknown: [],
  truncated: false,
};

const day = (key: string) => screen.getAllByTestId('cal-day').find((d) => d.dataset.day === key)!;
const texts = (key: string) =>
  within(day(key))
    .queryAllByTestId('cal-entry')
    .map((e) => e.textContent);

describe('the environment calendar', () => {
  it('asks for whole local days from last week and places each entry on its days', async () => {
    const asked: URL[] = [];
    show(['*'], answer, asked);
    await screen.findByRole('table', { name: 'Calendar of prod' });
    expect(asked[0]!.pathname).toBe('/api/envs/prod/calendar');
    expect(asked[0]!.searchParams.get('from')).toBe(new Date(2026, 10, 30).toISOString());
    expect(asked[0]!.searchParams.get('days')).toBe('42');
    expect(day('2026-12-09').getAttribute('aria-current')).toBe('date');
    expect(texts('2026-12-08')).toEqual([expect.stringMatching(/^14:02 payments abcdef1/)]);
    expect(texts('2026-12-10')).toEqual([expect.stringMatching(/^from 22:00 Argo CD deny nightly batch/)]);
    expect(texts('2026-12-11')).toEqual([]);
    expect(texts('2026-12-20')).toEqual([
      expect.stringMatching(/^all day Window holiday/),
      expect.stringMatching(/^all day Frozen \(window holiday\)/),
    ]);
    expect(texts('2026-12-22')).toEqual([
      expect.stringMatching(/^until 12:00 Window holiday/),
      expect.stringMatching(/^until 12:00 Frozen \(window holiday\)/),
    ]);
    expect(
      within(day('2026-12-20'))
        .getByRole('link', { name: /Frozen/ })
        .getAttribute('href'),
    ).toBe('/freezes/f1');
    expect(within(day('2026-12-08')).getByRole('link').getAttribute('href')).toBe(`/apps/${APP}`);
  });

  it('a busy day shows six entries and a button for the rest', async () => {
    const releases = Array.from({ length: 8 }, (_, i) => ({
      type: 'release' as const,
      app: APP,
      sha: `${i}bcdef1234567`,
      at: local(7, 9, i),
      failed: false,
    }));
    show(['*'], { ...answer, entries: releases });
    await screen.findByRole('table', { name: 'Calendar of prod' });
    expect(texts('2026-12-07')).toHaveLength(6);
    const more = within(day('2026-12-07')).getByTestId('cal-more');
    expect(more.textContent).toBe('+2 more');
    fireEvent.click(more);
    expect(texts('2026-12-07')).toHaveLength(8);
    expect(more.getAttribute('aria-expanded')).toBe('true');
  });

  it('says what could not be read, as an alert', async () => {
    show(['*'], {
      ...answer,
      unknown: [{ source: 'prod: AppProject shop', why: 'AppProjects on prod are not read yet' }],
    });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/unknown.*prod: AppProject shop: AppProjects on prod are not read yet/);
  });

  it('a reader without a role in the environment is told why, and nothing is asked', async () => {
    const asked: URL[] = [];
    show(['dev'], answer, asked);
    await waitFor(() => expect(screen.getByTestId('env-calendar').textContent).toMatch(/role/));
    expect(asked).toEqual([]);
  });
});
