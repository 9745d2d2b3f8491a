// The environment releases route with a store that fails or holds more than one request reads: a 503 that
// says the metrics are unknown (never an empty chart), `truncated` with where the counted records begin, and
// only the records and apps of the clusters where the reader may read evidence. (The real store, sandbox and
// access rules: test/integration/env-releases.test.ts.)
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { EnvReleasesResponse } from '../../api/schemas.ts';
import { parseGrant } from '../../domain/access.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import type { AppDeps } from '../deps.ts';
import { installErrorHandler } from '../http/errors.ts';
import type { EvidenceQuery } from '../evidence/store.ts';
import { envReleaseRoutes } from './env-routes.ts';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const now = new Date().toISOString();
const sha = (i: number) => i.toString(16).padStart(40, '0');

/** `n` deployments in dev: change + ok reconcile each, alternating between two clusters */
function store(n: number) {
  const events: EvidenceEvent[] = [];
  for (let i = 0; i < n; i++) {
    const cluster = i % 2 ? 'prod' : 'nonprod';
    for (const type of ['release.change', 'release.reconcile'])
      events.push({
        seq: events.length + 1,
        time: now,
        type: type as EvidenceEvent['type'],
        actor: 'console',
        app: `${cluster}/flux-system/kustomization/app-${i}`,
        cluster,
        env: 'dev',
        data: { sha: sha(i), status: 'ok' },
        prevHash: '',
        hash: '',
      });
  }
  const calls: EvidenceQuery[] = [];
  const list = async (q: EvidenceQuery = {}) => {
    calls.push(q);
    const types = q.type === undefined ? undefined : [q.type].flat();
    return events
      .filter(
        (e) =>
          (!q.env || e.env === q.env) &&
          (!q.app || e.app === q.app) &&
          (!types || types.includes(e.type)) &&
          (q.beforeSeq === undefined || e.seq < q.beforeSeq),
      )
      .sort((a, b) => b.seq - a.seq)
      .slice(0, q.limit ?? 200);
  };
  return { list, calls };
}

async function start(list: (q?: EvidenceQuery) => Promise<EvidenceEvent[]>, grants: string[]) {
  app = Fastify();
  installErrorHandler(app);
  app.addHook('onRequest', async (req) => {
    req.principal = { name: 'u', source: 'local', groups: [], grants: grants.map(parseGrant) } as never;
  });
  const deps = {
    store: { list },
    catalog: {
      list: () =>
        [
          { id: 'nonprod/flux-system/kustomization/a', cluster: 'nonprod', env: 'dev', name: 'a' },
          { id: 'prod/flux-system/kustomization/b', cluster: 'prod', env: 'dev', name: 'b' },
        ].map((a) => ({
          ...a,
          namespace: 'flux-system',
          kind: 'Kustomization',
          controller: 'flux',
          sync: 'Synced',
          health: 'Healthy',
        })),
    },
    recorder: { observe: () => undefined },
  } as unknown as AppDeps;
  await app.register(envReleaseRoutes, deps);
  return app;
}

describe('GET /api/envs/:env/releases', () => {
  it('a store that cannot be read: 503 EvidenceUnavailable, the metrics unknown', async () => {
    const a = await start(async () => {
      throw new Error('SQLITE_IOERR: disk I/O error');
    }, ['auditor']);
    const r = await a.inject('/api/envs/dev/releases');
    expect(r.statusCode).toBe(503);
    expect(r.json()).toMatchObject({
      error: { code: 'EvidenceUnavailable', message: expect.stringMatching(/release metrics of dev are unknown/) },
    });
    expect(r.body).not.toContain('SQLITE_IOERR'); // the store's own words go to the log only
  });

  it('more records than the cap: read page by page, then `truncated` with where the counted records begin', async () => {
    const s = store(10_500); // 21,000 records > 20,000
    const a = await start(s.list, ['auditor']);
    const r = await a.inject('/api/envs/dev/releases?days=1');
    expect(r.statusCode).toBe(200);
    const body = r.json<EnvReleasesResponse>();
    expect(body.truncated).toBe(true);
    expect(body.completeFrom).toBe(now);
    expect(body.metrics.changeFailureRate.total).toBe(10_000);
    expect(body.releases).toHaveLength(200);
    expect(s.calls.every((c) => (c.limit ?? 0) <= 5000)).toBe(true);
  });

  it('under the cap: not truncated; a reader with evidence.read on one cluster sees only its records and apps', async () => {
    const s = store(10);
    const a = await start(s.list, ['reviewer@nonprod/dev']);
    const body = (await a.inject('/api/envs/dev/releases?days=1')).json<EnvReleasesResponse>();
    expect(body.truncated).toBe(false);
    expect(body.metrics.changeFailureRate.total).toBe(5);
    expect(new Set(body.releases.map((x) => x.cluster))).toEqual(new Set(['nonprod']));
    expect(body.apps.map((x) => x.id)).toEqual(['nonprod/flux-system/kustomization/a']);
    expect((await a.inject('/api/envs/dev/releases?cluster=prod')).statusCode).toBe(403);
    expect((await a.inject('/api/envs/staging/releases')).statusCode).toBe(403);
    expect((await a.inject('/api/envs/dev/releases?days=0')).statusCode).toBe(400);
  });
});
