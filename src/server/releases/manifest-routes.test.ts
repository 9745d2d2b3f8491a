// Two releases compared across environments (`compare?toApp=`, issue 40 items 9 and 12), on a real SQLite store
// with the recorded renders of one app in dev and in staging: objects are matched in each environment's own
// namespace (changes, not added and removed); the second app gets the first one's checks: release.read on its
// environment (a 403 recorded as access.denied, which names neither its environment nor whether it exists) and,
// in impersonation mode, Kubernetes RBAC on its app object. (The guard itself checks the first app; here
// each request is signed in as the test says. The real sandbox: test/integration/compare-envs.test.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompareResponse } from '../../api/schemas.ts';
import { parseGrant } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import type { EvidenceInput } from '../../domain/evidence.ts';
import type { AccessRef } from '../auth/access-review.ts';
import type { AppDeps } from '../deps.ts';
import { renderCanonical } from '../diff/index.ts';
import { renderHash } from '../diff/render.ts';
import { openEvidenceStore, type EvidenceStore } from '../evidence/index.ts';
import { installErrorHandler } from '../http/errors.ts';
import { ManifestStore } from '../store/manifest-store.ts';
import { manifestRoutes } from './manifest-routes.ts';

const DEV = 'nonprod/flux-system/kustomization/digital-human-dev';
const STAGING = 'nonprod/flux-system/kustomization/digital-human-staging';
const PROD = 'prod/flux-system/kustomization/digital-human-prod';
const SHA = 'b0af97c5db1ce093f249cc420e33b7703a49d593';

const app = (id: string, env: string): App => {
  const [cluster = '', namespace = '', , name = ''] = id.split('/');
  return { id, cluster, namespace, kind: 'Kustomization', name, env, controller: 'flux' } as App;
};
const APPS = [app(DEV, 'dev'), app(STAGING, 'staging'), app(PROD, 'prod')];

/** an environment's render as the seed's overlay makes it: its own namespace, replicas and generated ConfigMap */
const render = (env: string, replicas: number, settings: string) => [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'render-worker', namespace: env, labels: { env } },
    spec: { replicas },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'render-worker', namespace: env, labels: { env } } },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `env-settings-${settings}`, namespace: env, labels: { env } },
    data: { ENVIRONMENT: env },
  },
];

let dir: string;
let store: EvidenceStore;
let servers: FastifyInstance[] = [];
let denials: EvidenceInput[];
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'compare-'));
  store = await openEvidenceStore({ dataDir: dir });
  const manifests = new ManifestStore(store);
  for (const [id, env, replicas, settings] of [
    [DEV, 'dev', 4, 'c6mk59h8f4'],
    [STAGING, 'staging', 6, 'b7dt2g9hkm'],
    [PROD, 'prod', 8, 'k2g9hb7dtm'],
  ] as const) {
    const objects = render(env, replicas, settings);
    const hash = renderHash(objects);
    await manifests.put(hash, renderCanonical(objects), objects.length);
    await store.append({
      time: new Date().toISOString(),
      type: 'release.render',
      actor: 'console',
      app: id,
      cluster: id.split('/')[0] ?? '',
      env,
      data: { sha: SHA, renderHash: hash },
    });
  }
  denials = [];
});
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** the routes, each request signed in with `grants`; `rbac`: impersonation mode, what Kubernetes RBAC allows */
async function start(grants: string[], rbac?: (ref: AccessRef) => boolean) {
  const server = Fastify();
  servers.push(server);
  installErrorHandler(server);
  server.addHook('onRequest', async (req) => {
    req.principal = { name: 'u', source: 'local', groups: [], grants: grants.map(parseGrant) } as never;
  });
  const deps = {
    store,
    catalog: { settleNow: () => undefined, get: (id: string) => APPS.find((a) => a.id === id), list: () => APPS },
    recorder: { observe: (e: EvidenceInput) => denials.push(e) },
    ...(rbac
      ? {
          reviewer: {
            mayGet: async (_user: unknown, ref: AccessRef) => (rbac(ref) ? 'allowed' : 'denied'),
            visibleApps: async (_req: unknown, apps: App[]) => apps,
          },
        }
      : {}),
  } as unknown as AppDeps;
  await server.register(manifestRoutes, deps);
  return server;
}

const compare = (s: FastifyInstance, from: string, to: string) =>
  s.inject(`/api/apps/${from}/releases/compare?from=${SHA}&to=${SHA}&toApp=${encodeURIComponent(to)}`);

describe('GET …/releases/compare?toApp= (one app in two environments)', () => {
  it("matches objects in each environment's namespace: the replicas changed, nothing added or removed", async () => {
    const s = await start(['developer']);
    const r = await compare(s, DEV, STAGING);
    expect(r.statusCode, r.body).toBe(200);
    const c = r.json<CompareResponse>();
    expect(c.from).toMatchObject({ app: DEV, targetNamespace: 'dev' });
    expect(c.to).toMatchObject({ app: STAGING, targetNamespace: 'staging' });
    expect(c.added).toEqual([]);
    expect(c.removed).toEqual([]);
    expect(c.changed.find((o) => o.kind === 'Deployment')).toMatchObject({
      namespace: 'staging',
      fromNamespace: 'dev',
      name: 'render-worker',
      fields: expect.arrayContaining([{ path: 'spec.replicas', from: 4, to: 6 }]),
    });
    // one app's own two releases: no target is named, namespaces are their own
    const own = (await s.inject(`/api/apps/${DEV}/releases/compare?from=${SHA}&to=${SHA}`)).json<CompareResponse>();
    expect(own.from).not.toHaveProperty('targetNamespace');
    expect(own).toMatchObject({ added: [], removed: [], changed: [], unchanged: 3 });
  });

  it('refuses (403, recorded) the second app without release.read on its environment; says neither where nor whether', async () => {
    const s = await start(['developer@nonprod/dev']);
    const r = await compare(s, DEV, STAGING);
    expect(r.statusCode).toBe(403);
    const message = r.json<{ error: { message: string } }>().error.message;
    expect(message).toMatch(new RegExp(`^Cannot compare with ${STAGING}: You need the .* role on this app's`));
    expect(message).not.toMatch(/nonprod\/staging|in staging/);
    expect(denials).toEqual([
      expect.objectContaining({
        type: 'access.denied',
        actor: 'u',
        app: STAGING,
        cluster: 'nonprod',
        env: 'staging',
        data: expect.objectContaining({ action: 'release.read', reason: expect.stringContaining('nonprod/staging') }),
      }),
    ]);
    // an id the console does not know: the same 403, never a 404 that says it does not exist
    const unknown = await compare(s, DEV, 'nonprod/flux-system/kustomization/nope');
    expect(unknown.statusCode).toBe(403);
    expect(denials.at(-1)).toMatchObject({ type: 'access.denied', app: 'nonprod/flux-system/kustomization/nope' });
    // with the grant on every environment: a 404
    const auditor = await start(['auditor']);
    expect((await compare(auditor, DEV, 'nonprod/flux-system/kustomization/nope')).statusCode).toBe(404);
  });

  it('in impersonation mode, refuses (403, recorded) the second app when Kubernetes RBAC hides its object', async () => {
    const s = await start(['developer'], (t) => t.cluster !== 'prod');
    const r = await compare(s, STAGING, PROD);
    expect(r.statusCode).toBe(403);
    expect(r.json<{ error: { message: string } }>().error.message).toBe(
      `Cannot compare with ${PROD}: your Kubernetes RBAC does not let you get Kustomization objects in flux-system on prod`,
    );
    expect(denials).toEqual([
      expect.objectContaining({ type: 'access.denied', app: PROD, env: 'prod', data: expect.anything() }),
    ]);
    const ok = await compare(s, DEV, STAGING);
    expect(ok.statusCode, ok.body).toBe(200);
  });
});
