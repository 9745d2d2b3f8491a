// msw handlers for UI unit tests and the offline demo. Typed by the API
// schemas; fixtures are captured from the real sandbox (npm run capture-fixtures).
import { http, HttpResponse } from 'msw';
import type {
  AppResponse,
  AppsResponse,
  BreakGlassListResponse,
  ClusterStateDto,
  EnvCalendarResponse,
  FreezeWindowsResponse,
  HealthzResponse,
  ReconcileStatusResponse,
  SessionResponse,
} from '../src/api/schemas.ts';
import fixtures from './fixtures/apps.json' with { type: 'json' };

export const appsFixture = fixtures as unknown as AppsResponse & {
  clusters: ClusterStateDto[];
  details: Record<string, AppResponse>;
};

export const handlers = [
  http.get('/api/apps', () =>
    HttpResponse.json({
      apps: appsFixture.apps,
      total: appsFixture.total,
      envs: appsFixture.envs,
    } satisfies AppsResponse),
  ),
  http.get('/api/clusters', () => HttpResponse.json({ clusters: appsFixture.clusters })),
  http.get('/api/apps/:cluster/:namespace/:kind/:name', ({ params }) => {
    const id = `${String(params.cluster)}/${String(params.namespace)}/${String(params.kind)}/${String(params.name)}`;
    const d = appsFixture.details[id];
    return d
      ? HttpResponse.json(d)
      : HttpResponse.json({ error: { code: 'NotFound', message: `no app ${id}` } }, { status: 404 });
  }),
  // what became of a "reconcile now": the demo's controller never answers
  http.get('/api/apps/:cluster/:namespace/:kind/:name/reconcile-status', ({ request }) =>
    HttpResponse.json({
      state: 'pending',
      requestedAt: new URL(request.url).searchParams.get('requestedAt') ?? '',
      reverted: [],
      timeoutMs: 60_000,
    } satisfies ReconcileStatusResponse),
  ),
  http.get('/api/evidence', () => HttpResponse.json({ events: [] })),
  // no planned freeze window
  http.get('/api/freeze-windows', () => HttpResponse.json({ windows: [] } satisfies FreezeWindowsResponse)),
  http.get('/api/break-glass', () => HttpResponse.json({ requests: [] } satisfies BreakGlassListResponse)),
  // an environment's calendar with nothing on it
  http.get('/api/envs/:env/calendar', ({ params, request }) => {
    const q = new URL(request.url).searchParams;
    const from = q.get('from') ?? new Date().toISOString();
    const to = new Date(Date.parse(from) + Number(q.get('days') ?? 30) * 86_400_000).toISOString();
    return HttpResponse.json({
      env: String(params.env),
      from,
      to,
      entries: [],
      unknown: [],
      truncated: false,
    } satisfies EnvCalendarResponse);
  }),
  // the evidence store keeps up
  http.get('/healthz', () =>
    HttpResponse.json({ ok: true, evidence: { pending: 0, failing: false, refused: 0 } } satisfies HealthzResponse),
  ),
  // the offline demo is read-only: a viewer of everything
  http.get('/api/auth/providers', () => HttpResponse.json({ local: true, oidc: false })),
  http.get('/api/auth/session', () =>
    HttpResponse.json({
      user: { name: 'demo', source: 'local', groups: [], grants: [{ role: 'viewer', clusters: ['*'], envs: ['*'] }] },
      csrfToken: 'demo',
      mustChangePassword: false,
      expiresAt: '2099-01-01T00:00:00.000Z',
      oidc: false,
    } satisfies SessionResponse),
  ),
];
