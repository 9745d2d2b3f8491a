// @vitest-environment jsdom
// The environment's releases page: four named charts whose numbers reach screen readers in tables, "unknown"
// where no evidence exists (never 0 %), the apps with their newest release linking to each app page, and the
// BFF's error said, not an empty chart.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../../../../mocks/handlers.ts';
import type { EnvReleasesResponse } from '../../../../api/schemas.ts';
import { buildReleases } from '../../../../domain/release.ts';
import { envReleaseMetrics, type MetricsEvent } from '../../../../domain/release-metrics.ts';
import { EnvReleasesPage } from './env-releases.tsx';

// recharts' ResponsiveContainer measures its box; jsdom has no ResizeObserver
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;

const APP = 'nonprod/flux-system/kustomization/digital-human-dev';
const SHA = 'e'.repeat(40);
const FROM = '2026-12-01T00:00:00.000Z';
const TO = '2026-12-03T23:59:59.999Z';
const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
});
afterAll(() => server.close());

function grants(role: string, envs = ['*']) {
  return http.get('/api/auth/session', () =>
    HttpResponse.json({
      user: { name: 'u', source: 'local', groups: [], grants: [{ role, clusters: ['*'], envs }] },
      csrfToken: 'x',
      mustChangePassword: false,
      expiresAt: '2099-01-01T00:00:00.000Z',
      oidc: false,
    }),
  );
}

const ev = (seq: number, type: string, time: string, data: Record<string, unknown>) => ({
  seq,
  time,
  type,
  actor: 'console',
  app: APP,
  cluster: 'nonprod',
  env: 'dev',
  data: { sha: SHA, revision: `main@sha1:${SHA}`, ...data },
});

function response(events: Array<MetricsEvent & { actor: string }>): EnvReleasesResponse {
  const { releases, ...m } = envReleaseMetrics('dev', events, { from: FROM, to: TO });
  return {
    env: 'dev',
    from: FROM,
    to: TO,
    failureWindowHours: 24,
    truncated: false,
    metrics: m,
    releases,
    apps: [
      {
        id: APP,
        cluster: 'nonprod',
        namespace: 'flux-system',
        kind: 'Kustomization',
        name: 'digital-human-dev',
        controller: 'flux',
        sync: 'Synced',
        health: 'Degraded',
        newest: buildReleases(events)[0] ?? null,
        truncated: false,
      },
    ],
  };
}

function show(path = '/envs/dev') {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route path="/envs/:env" element={<EnvReleasesPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe('EnvReleasesPage', () => {
  it(
    'four named charts with their numbers in tables, and the apps with their newest release',
    { timeout: 30_000 },
    async () => {
      const events = [
        ev(1, 'release.change', '2026-12-02T09:59:00.000Z', { subject: 'Bump' }),
        ev(2, 'release.reconcile', '2026-12-02T10:00:00.000Z', { status: 'ok', secondsAfterCommit: 60 }),
        ev(3, 'release.health', '2026-12-02T10:00:10.000Z', { health: 'Degraded', status: 'failed' }),
        ev(4, 'drift.detected', '2026-12-03T08:00:00.000Z', {}),
      ];
      let asked = '';
      server.use(
        grants('auditor'),
        http.get('/api/envs/:env/releases', ({ request }) => {
          asked = new URL(request.url).search;
          return HttpResponse.json(response(events));
        }),
      );
      show('/envs/dev?days=7');
      expect(await screen.findByRole('heading', { level: 1, name: 'dev releases' }, { timeout: 10_000 })).toBeTruthy();
      const table = await screen.findByRole('table', { name: 'Deployments per day in dev' }, { timeout: 10_000 });
      expect(asked).toBe('?days=7');
      expect(document.title).toBe('dev releases — GitOps console');
      for (const name of [
        'Deployments per day',
        'Lead time, commit → Healthy',
        'Change failure rate',
        'Drift and freeze events per day',
      ])
        expect(screen.getByRole('heading', { level: 2, name })).toBeTruthy();
      expect(screen.getAllByRole('img').map((i) => i.getAttribute('aria-label'))).toEqual([
        expect.stringMatching(/^Bar chart: deployments per day in dev, the last 7 days; 1 in total/),
        expect.stringMatching(/^Line chart: median lead time per day/),
        expect.stringMatching(/^Line chart: change failure rate per day in dev.*100 % overall/),
        expect.stringMatching(/^Bar chart: drift and freeze events per day.*1 drift and 0 freeze events/),
      ]);
      // the day before the first record: nothing known, said so; the deployment's day: 1
      const rows = within(table).getAllByRole('row');
      expect(rows.map((r) => r.textContent)).toEqual([
        'Day (UTC)Deployments',
        '2026-12-01no records',
        '2026-12-021',
        '2026-12-030',
      ]);
      expect(screen.getByText(/^100 %: 1 of 1 deployments failed within 24 h/)).toBeTruthy();
      expect(screen.getByText('Unknown: no release of this range became Healthy.')).toBeTruthy();
      const failures = screen.getByRole('table', { name: 'Change failure rate per day in dev' });
      expect(within(failures).getByRole('row', { name: /2026-12-02/ }).textContent).toBe('2026-12-0211100 %');

      const app = screen.getByTestId('env-app-row');
      expect(within(app).getByRole('link', { name: 'digital-human-dev' }).getAttribute('href')).toBe(`/apps/${APP}`);
      expect(app.textContent).toContain('eeeeeee');
      expect(app.textContent).toMatch(/stops at artifact: pending/);
    },
  );

  it('no records in the range: the numbers are unknown, not 0 %', async () => {
    server.use(
      grants('auditor'),
      http.get('/api/envs/:env/releases', () => HttpResponse.json({ ...response([]), apps: [] })),
    );
    show();
    expect(await screen.findByText(/every number below is unknown, not\s+zero/)).toBeTruthy();
    expect(screen.getByText('Unknown: no deployment in this range.')).toBeTruthy();
    expect(screen.queryByText(/0 %/)).toBeNull();
    expect(screen.getByText('No app of this environment is listed for you.')).toBeTruthy();
  });

  it('a store that cannot be read: the error is said, no chart is drawn', async () => {
    server.use(
      grants('auditor'),
      http.get('/api/envs/:env/releases', () =>
        HttpResponse.json(
          {
            error: {
              code: 'EvidenceUnavailable',
              message: 'the evidence store cannot be read: the release metrics of dev are unknown until it answers',
            },
          },
          { status: 503 },
        ),
      ),
    );
    show();
    expect((await screen.findByRole('alert')).textContent).toMatch(/evidence store cannot be read/);
    expect(screen.queryByTestId('env-chart')).toBeNull();
  });

  it('a reader without evidence.read on the environment: says why and asks nothing', async () => {
    server.use(grants('auditor', ['staging']));
    show();
    expect(await screen.findByText(/You need the reviewer, oncall or auditor role in dev/)).toBeTruthy();
  });
});
