// /metrics: the families exist after a few requests, labels are route templates and enums (never the raw URL,
// user names or UIDs), the store gauges come from the store, and the access rule (token, else loopback only).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvidenceRecorder } from './evidence/recorder.ts';
import { ClusterManager, type ManagedCluster } from './kube/cluster-manager.ts';
import type { Informer } from './kube/informer.ts';
import { ConsoleMetrics } from './metrics.ts';
import { metricsRoutes } from './metrics-routes.ts';
import type { AppCatalog } from './apps/catalog.ts';
import type { ObjectIndex } from './kube/object-index.ts';
import { FreezeStore } from './freeze/store.ts';
import { PruneStore } from './prune/store.ts';
import { SqliteEvidenceStore } from './evidence/sqlite-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'metrics-'));
const store = SqliteEvidenceStore.open(dir);
const silent = { warn: () => undefined, error: () => undefined };
const recorder = new EvidenceRecorder(store, silent);
const clusters = new ClusterManager();
const UID = '6f1c2a9e-0d7b-4c55-9a3e-1b2c3d4e5f60';

// one cluster with two informers, as the cluster manager holds them (no apiserver needed)
const informer = (group: string, kind: string, objects: number, relists: number): Informer =>
  ({
    kind: { group, version: 'v1', kind, plural: `${kind.toLowerCase()}s`, namespaced: true },
    state: { synced: true, absent: false, relists },
    lastEventAt: Date.now() - 2_000,
    store: new Map(Array.from({ length: objects }, (_, i) => [`ns/o${i}`, { metadata: { uid: UID } }])),
  }) as unknown as Informer;
clusters.clusters.set('nonprod', {
  name: 'nonprod',
  state: { name: 'nonprod', server: 'https://x', status: 'connected', since: '', kinds: {} },
  informers: new Map([
    ['apps/Deployment', informer('apps', 'Deployment', 3, 1)],
    ['/Pod', informer('', 'Pod', 5, 2)],
  ]),
} as unknown as ManagedCluster);
const catalog = {
  list: () => [
    { cluster: 'nonprod', sync: 'Synced', health: 'Degraded', name: 'render-worker' },
    { cluster: 'nonprod', sync: 'Synced', health: 'Healthy', name: 'api' },
  ],
} as unknown as AppCatalog;
const index = { sizes: () => new Map([['nonprod', 8]]) } as unknown as ObjectIndex;

async function appWith(metricsToken?: string): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy: false });
  const metrics = new ConsoleMetrics({ clusters, catalog, index, recorder, store }, { defaultMetrics: false });
  metrics.install(app);
  app.get('/api/apps/:cluster/:name', async (req, rep) => {
    const { name } = req.params as { name: string };
    if (name === 'boom') return rep.code(500).send({ error: 'x' });
    if (name === 'alice') return rep.code(403).send({ error: 'x' });
    return { ok: true };
  });
  await app.register(metricsRoutes, { metrics, metricsToken });
  return app;
}

let app: FastifyInstance;
beforeAll(async () => {
  const now = new Date().toISOString();
  const prune = new PruneStore<object>(store);
  for (const [id, status] of [
    ['p1', 'pending'],
    ['p2', 'pending'],
    ['p3', 'done'],
  ] as const)
    await prune.create({
      id,
      app: 'nonprod/flux-system/Kustomization/api',
      cluster: 'nonprod',
      env: 'dev',
      status,
      statusReason: null,
      snapshotHash: 'h',
      requiredApprovals: 1,
      requester: { issuer: 'console', subject: 'alice', name: 'alice' },
      createdAt: now,
      expiresAt: now,
      doc: {},
    });
  const freezes = new FreezeStore(store);
  await freezes.create({
    id: 'f1',
    cluster: 'nonprod',
    env: 'dev',
    app: null,
    status: 'active',
    reason: 'incident',
    incident: null,
    createdBy: 'alice',
    createdAt: now,
    expiresAt: now,
    doc: { targets: [], extensions: [], startedAt: now },
  });
  app = await appWith();
  await recorder.record({ time: now, type: 'console.started', actor: 'alice', data: {} });
});

afterAll(async () => {
  await app.close();
  recorder.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** sample lines of one family: `name{labels} value` */
const samples = (text: string, name: string) =>
  text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('/metrics', () => {
  it('has every family after a few requests, labelled by route template, never by the raw URL or a user', async () => {
    for (const name of ['api', 'api', 'alice', 'boom'])
      await app.inject({ url: `/api/apps/nonprod/${name}?user=alice&uid=${UID}` });
    const r = await app.inject({ url: '/metrics' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const t = r.body;
    for (const family of [
      'http_request_duration_seconds',
      'http_errors_total',
      'informer_lists_total',
      'informer_watch_idle_seconds',
      'informer_synced',
      'informer_cache_objects',
      'object_index_objects',
      'cluster_connected',
      'apps',
      'evidence_append_duration_seconds',
      'evidence_append_failures_total',
      'evidence_pending',
      'evidence_store_failing',
      'evidence_refused_actions_total',
      'prune_previews',
      'freezes_active',
      'state_bus_listening',
      'release_verifications_pending',
      'releases_followed',
      'state_bus_notifications_total',
      'sessions_cached',
    ])
      expect(t, family).toContain(`# TYPE gitops_console_${family} `);
    expect(samples(t, 'gitops_console_http_request_duration_seconds_count')).toEqual(
      expect.arrayContaining([
        'gitops_console_http_request_duration_seconds_count{route="/api/apps/:cluster/:name",method="GET",status_class="2xx"} 2',
        'gitops_console_http_request_duration_seconds_count{route="/api/apps/:cluster/:name",method="GET",status_class="4xx"} 1',
        'gitops_console_http_request_duration_seconds_count{route="/api/apps/:cluster/:name",method="GET",status_class="5xx"} 1',
      ]),
    );
    expect(samples(t, 'gitops_console_http_errors_total').sort()).toEqual([
      'gitops_console_http_errors_total{route="/api/apps/:cluster/:name",method="GET",status="403"} 1',
      'gitops_console_http_errors_total{route="/api/apps/:cluster/:name",method="GET",status="500"} 1',
    ]);
    expect(samples(t, 'gitops_console_informer_cache_objects').sort()).toEqual([
      'gitops_console_informer_cache_objects{cluster="nonprod",kind="Deployment.apps"} 3',
      'gitops_console_informer_cache_objects{cluster="nonprod",kind="Pod"} 5',
    ]);
    expect(samples(t, 'gitops_console_informer_lists_total')).toContain(
      'gitops_console_informer_lists_total{cluster="nonprod",kind="Pod"} 2',
    );
    const idle = samples(t, 'gitops_console_informer_watch_idle_seconds').map((l) => Number(l.split(' ')[1]));
    expect(idle).toHaveLength(2);
    for (const s of idle) expect(s).toBeGreaterThanOrEqual(2);
    expect(samples(t, 'gitops_console_object_index_objects')).toEqual([
      'gitops_console_object_index_objects{cluster="nonprod"} 8',
    ]);
    expect(samples(t, 'gitops_console_apps').sort()).toEqual([
      'gitops_console_apps{cluster="nonprod",sync="Synced",health="Degraded"} 1',
      'gitops_console_apps{cluster="nonprod",sync="Synced",health="Healthy"} 1',
    ]);
    expect(samples(t, 'gitops_console_evidence_append_duration_seconds_count')).toEqual([
      'gitops_console_evidence_append_duration_seconds_count{result="ok"} 1',
    ]);
    expect(samples(t, 'gitops_console_evidence_pending')).toEqual(['gitops_console_evidence_pending 0']);
    expect(samples(t, 'gitops_console_prune_previews').sort()).toEqual([
      'gitops_console_prune_previews{status="done"} 1',
      'gitops_console_prune_previews{status="pending"} 2',
    ]);
    expect(samples(t, 'gitops_console_freezes_active')).toEqual(['gitops_console_freezes_active 1']);
    // bounded cardinality: no raw URLs, query strings, user names, app names or UIDs anywhere
    for (const leak of ['alice', 'boom', 'render-worker', UID, '?', '/api/apps/nonprod']) expect(t).not.toContain(leak);
    // the labels that exist are the bounded ones
    const labelNames = new Set([...t.matchAll(/[{,]([a-z_]+)="/g)].map((m) => m[1]));
    expect([...labelNames].sort()).toEqual(
      ['cluster', 'health', 'kind', 'le', 'method', 'result', 'route', 'status', 'status_class', 'sync'].sort(),
    );
  });

  it('counts failed appends', async () => {
    const failing = new EvidenceRecorder(
      {
        ...store,
        append: async () => {
          throw new Error('disk full');
        },
      } as unknown as typeof store,
      silent,
      { retryBaseMs: 60_000 },
    );
    const m = new ConsoleMetrics({ clusters, catalog, recorder: failing, store }, { defaultMetrics: false });
    await failing.record({ time: new Date().toISOString(), type: 'cluster.lost', actor: 'a', data: {} });
    const t = await m.registry.metrics();
    expect(samples(t, 'gitops_console_evidence_append_failures_total')).toEqual([
      'gitops_console_evidence_append_failures_total 1',
    ]);
    expect(samples(t, 'gitops_console_evidence_pending')).toEqual(['gitops_console_evidence_pending 1']);
    expect(samples(t, 'gitops_console_evidence_store_failing')).toEqual(['gitops_console_evidence_store_failing 1']);
    failing.close();
  });

  it('without CONSOLE_METRICS_TOKEN: loopback only, and not through a proxy', async () => {
    expect((await app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/metrics', remoteAddress: '::1' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/metrics', remoteAddress: '10.1.2.3' })).statusCode).toBe(403);
    const proxied = await app.inject({ url: '/metrics', headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(proxied.statusCode).toBe(403);
    expect(proxied.json()).toMatchObject({ error: { code: 'Forbidden' } });
  });

  it('with CONSOLE_METRICS_TOKEN: a bearer token from anywhere, nothing without it (loopback too)', async () => {
    const a = await appWith('s3cret-token');
    try {
      const none = await a.inject({ url: '/metrics' });
      expect(none.statusCode).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(none.body).not.toContain('s3cret');
      expect((await a.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
      expect((await a.inject({ url: '/metrics', headers: { authorization: 's3cret-token' } })).statusCode).toBe(401);
      const ok = await a.inject({
        url: '/metrics',
        remoteAddress: '10.1.2.3',
        headers: { authorization: 'Bearer s3cret-token' },
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('gitops_console_apps');
    } finally {
      await a.close();
    }
  });
});
