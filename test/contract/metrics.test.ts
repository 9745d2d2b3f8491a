// /metrics of the real BFF against the sandbox: the token rule as configured (CONSOLE_METRICS_TOKEN), the
// informer, cache, evidence and request families for both clusters, and labels that never carry a user
// name, a raw URL or an object UID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson, RECORDER_ON, startTestConsole } from '../support/console.ts';

const TOKEN = 'metrics-token-for-the-test-0123456789';
let con: Awaited<ReturnType<typeof startTestConsole>>;

beforeAll(async () => {
  con = await startTestConsole({ ...RECORDER_ON, CONSOLE_METRICS_TOKEN: TOKEN });
  await waitFor('ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, { timeoutMs: 90_000 });
});
afterAll(async () => {
  await con?.close();
});

const scrape = (headers: Record<string, string> = {}) => fetch(`${con.url}/metrics`, { headers });
const sample = (text: string, line: RegExp) => text.split('\n').filter((l) => line.test(l));

describe('/metrics on the running console', () => {
  it('is a public route for the session guard, but needs the bearer token (loopback too)', async () => {
    expect(con.routes).toContainEqual({ method: 'GET', url: '/metrics', access: { public: true } });
    const none = await scrape();
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect((await scrape({ Authorization: 'Bearer nope' })).status).toBe(401);
    expect((await scrape({ Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  it('carries requests by route template, informer and cache sizes per cluster, evidence appends', async () => {
    const apps = await getJson<{ apps: Array<{ cluster: string; namespace: string; kind: string; name: string }> }>(
      con.url,
      '/api/apps',
    );
    expect(apps.status).toBe(200);
    const a = apps.body.apps[0];
    if (!a) throw new Error('no apps in the sandbox');
    await getJson(con.url, `/api/apps/${a.cluster}/${a.namespace}/${a.kind}/${a.name}`);
    await getJson(con.url, '/api/apps/nonprod/nowhere/Kustomization/no-such-app');
    const unauth = await fetch(`${con.url}/api/apps`); // no session
    expect(unauth.status, await unauth.text()).toBe(401);
    // a response is counted by Fastify's onResponse hook, which runs once the response has gone out: the client
    // may ask for /metrics before it has run
    const errors401 = /^gitops_console_http_errors_total\{route="\/api\/apps",method="GET",status="401"\} [1-9]/;
    let t = '';
    let r: Response | undefined;
    await waitFor(
      '/metrics to count the 401',
      async () => {
        r = await scrape({ Authorization: `Bearer ${TOKEN}` });
        t = await r.text();
        return sample(t, errors401).length > 0;
      },
      { timeoutMs: 5000, intervalMs: 100 },
    ).catch(() => undefined);
    expect(r?.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(
      sample(t, /^gitops_console_http_request_duration_seconds_count\{route="\/api\/apps",method="GET"/),
    ).not.toEqual([]);
    expect(sample(t, errors401), sample(t, /^gitops_console_http_errors_total/).join('\n')).toHaveLength(1);
    for (const cluster of ['nonprod', 'prod']) {
      expect(sample(t, new RegExp(`^gitops_console_cluster_connected\\{cluster="${cluster}"\\} 1$`))).toHaveLength(1);
      expect(
        sample(
          t,
          new RegExp(`^gitops_console_informer_cache_objects\\{cluster="${cluster}",kind="Deployment.apps"\\} [1-9]`),
        ),
      ).toHaveLength(1);
      expect(
        sample(
          t,
          new RegExp(
            `^gitops_console_informer_lists_total\\{cluster="${cluster}",kind="Kustomization.kustomize.toolkit.fluxcd.io"\\} [1-9]`,
          ),
        ),
      ).toHaveLength(1);
      expect(sample(t, new RegExp(`^gitops_console_informer_watch_idle_seconds\\{cluster="${cluster}",`))).not.toEqual(
        [],
      );
      expect(
        sample(t, new RegExp(`^gitops_console_object_index_objects\\{cluster="${cluster}"\\} [1-9]`)),
      ).toHaveLength(1);
    }
    expect(sample(t, /^gitops_console_apps\{cluster="nonprod",sync="\w+",health="\w+"\} [1-9]/)).not.toEqual([]);
    expect(sample(t, /^gitops_console_evidence_append_duration_seconds_count\{result="ok"\} [1-9]/)).toHaveLength(1);
    expect(sample(t, /^gitops_console_evidence_pending \d+$/)).toHaveLength(1);
    expect(sample(t, /^gitops_console_freezes_active \d+$/)).toHaveLength(1);
    // the release recorder runs here (one replica, no Lease): it follows releases
    expect(sample(t, /^gitops_console_releases_followed \d+$/)).toHaveLength(1);
    expect(sample(t, /^gitops_console_release_verifications_pending \d+$/)).toHaveLength(1);
    expect(sample(t, /^gitops_console_state_bus_listening 1$/)).toHaveLength(1);
    expect(t).toContain('# TYPE gitops_console_prune_previews gauge');
    expect(t).toContain('# TYPE process_resident_memory_bytes gauge');
    // bounded labels: no user, no app name, no raw path, no UID
    for (const leak of ['admin', a.name, 'no-such-app', '/api/apps/nonprod', TOKEN]) expect(t).not.toContain(leak);
    expect(t).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });
});
