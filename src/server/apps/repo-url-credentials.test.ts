// Credentials in an app's repository URL (issue 40, item 14): the console keeps the URL as the controller has it
// (its own Git runs may need it), but the app API (the list, the app, the stream's summaries) and the evidence
// (the revision observed, a freeze's write-back) carry it without its user info.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import { evaluateGenerators, type AppSetSpec } from '../../domain/appset.ts';
import { imageAutomationOf } from '../../domain/image-automation.ts';
import { withoutSourceCredentials } from '../../domain/url-credentials.ts';
import { appOf, FakeFlux, LIVE_CHANGE_ID, oncall, replicaOf, waitUntil } from '../../../test/support/freeze-fakes.ts';
import type { AppDeps } from '../deps.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { installErrorHandler } from '../http/errors.ts';
import { ClusterManager } from '../kube/cluster-manager.ts';
import type { KubeObject } from '../kube/informer.ts';
import { KINDS } from '../kube/kinds.ts';
import { AppCatalog } from './catalog.ts';
import { appRoutes, summarize } from './routes.ts';

const SECRET = 's3cr3t-t0ken';
const REPO = `https://deploy:${SECRET}@git.example.com/team/edge.git`;
const SHOWN = 'https://git.example.com/team/edge.git';

const dir = mkdtempSync(join(tmpdir(), 'repo-url-credentials-'));
const stores: SqliteEvidenceStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

const application = (): KubeObject =>
  ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'edge', namespace: 'argocd', labels: { env: 'prod' }, resourceVersion: '1' },
    spec: { source: { repoURL: REPO, path: 'edge' }, destination: { namespace: 'prod' } },
    status: {
      sync: { status: 'Synced', revision: 'a'.repeat(40) },
      resources: [{ group: '', version: 'v1', kind: 'Service', namespace: 'prod', name: 'edge' }],
    },
  }) as KubeObject;

describe('a repository URL with credentials', () => {
  it('the catalog keeps it; the app API and the revision-observed record carry it without them', async () => {
    const store = SqliteEvidenceStore.open(dir, 'catalog.sqlite');
    stores.push(store);
    const clusters = new ClusterManager();
    // (AppProjects not read: the sync windows are unknown, as on a cluster still starting)
    const state = {
      name: 'prod',
      server: 'https://prod',
      status: 'connecting',
      since: new Date().toISOString(),
      kinds: {},
    };
    clusters.clusters.set('prod', { get: () => undefined, list: () => [], state } as never);
    const catalog = new AppCatalog(clusters, new EvidenceRecorder(store, silent), { label: 'env' }, silent);
    await catalog.start();
    clusters.emit('object', 'prod', { type: 'update', kind: KINDS.Application, obj: application() });
    const id = 'prod/argocd/application/edge';
    // the console's own copy: as the controller has it (the write-back clones with it)
    expect(catalog.get(id)?.source.url).toBe(REPO);
    await catalog.flush();
    const observed = await store.list({ type: ['app.revision-observed'] });
    expect(observed).toHaveLength(1);
    expect(observed[0]?.data.sourceUrl).toBe(SHOWN);

    const server = Fastify();
    installErrorHandler(server);
    server.addHook('onRequest', async (req) => {
      req.principal = { name: 'v', source: 'local', groups: [], grants: [parseGrant('viewer')] } as never;
    });
    await server.register(appRoutes, { catalog, clusters, envOrder: ['prod'] } as unknown as AppDeps);
    try {
      const list = await server.inject('/api/apps');
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json<{ apps: Array<{ source: { url: string } }> }>().apps[0]?.source.url).toBe(SHOWN);
      const one = await server.inject(`/api/apps/${id}`);
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json<{ app: { source: { url: string } } }>().app.source.url).toBe(SHOWN);
      for (const body of [list.body, one.body]) expect(body).not.toContain(SECRET);
      // the stream's app-upsert sends the same summary
      const app = catalog.get(id);
      expect(app && JSON.stringify(summarize(app))).not.toContain(SECRET);
    } finally {
      await server.close();
    }
  });

  it("a freeze's write-back record names the repository without them; the write-back is given the app as it is", async () => {
    const ev = SqliteEvidenceStore.open(dir, 'freeze.sqlite');
    stores.push(ev);
    const flux = new FakeFlux();
    flux.add('edge');
    const app = appOf('edge', { kind: 'GitRepository', url: REPO, path: 'overlay' });
    const seen: string[] = [];
    const r = replicaOf({
      name: 'r',
      ev,
      flux,
      apps: [app],
      writeBack: async (a, req) => {
        seen.push(a.source.url ?? '');
        return { branch: req.branch, commit: 'b'.repeat(40), placements: [{ placed: true }] };
      },
    });
    const f = await r.service.create(oncall, { cluster: 'c', app: app.id, reason: 'incident', minutes: 60 });
    await r.service.end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }]);
    await waitUntil('the write-back recorded', async () =>
      (await ev.list({ limit: 100 })).some((e) => e.type === 'freeze.write-back'),
    );
    const all = await ev.list({ limit: 100 });
    expect(all.find((e) => e.type === 'freeze.write-back')?.data.repo).toBe(SHOWN);
    expect(JSON.stringify(all)).not.toContain(SECRET);
    expect(seen).toEqual([REPO]);
  });

  it('the image automation view names its GitRepository without them, and still matches the app', () => {
    const gitRepo = { metadata: { namespace: 'flux-system', name: 'edge' }, spec: { url: REPO } };
    const automation = {
      metadata: { namespace: 'flux-system', name: 'edge' },
      spec: {
        sourceRef: { kind: 'GitRepository', name: 'edge' },
        git: { push: { branch: 'main' } },
        update: { path: './overlay' },
      },
    };
    const view = imageAutomationOf(
      { sourceUrl: REPO, path: 'overlay' },
      { automations: [automation], policies: [], repositories: [], gitRepository: () => gitRepo },
    );
    expect(view.automations.map((a) => a.source.url)).toEqual([SHOWN]);
  });

  it("an ApplicationSet's Git generator is described without them; Git is still asked with the URL as written", async () => {
    const asked: string[] = [];
    const spec = {
      generators: [
        {
          kind: 'git-directories' as const,
          repoURL: REPO,
          revision: 'main',
          directories: [{ path: 'apps/*', exclude: false }],
        },
      ],
      goTemplate: false,
    } as unknown as AppSetSpec;
    const [ok] = await evaluateGenerators(spec, async (url) => (asked.push(url), ['apps/a']));
    const [failed] = await evaluateGenerators(spec, async () => {
      throw new Error('exit 128');
    });
    expect(asked).toEqual([REPO]);
    expect(ok?.detail).toBe(`${SHOWN} at main: apps/*`);
    expect(failed?.unknown).toBe(`reading ${SHOWN} at main failed: exit 128`);
  });

  it('withoutSourceCredentials leaves an app without credentials as it is', () => {
    const plain = { id: 'x', source: { url: SHOWN, path: 'p' } };
    expect(withoutSourceCredentials(plain)).toBe(plain);
    expect(withoutSourceCredentials({ ...plain, source: { url: REPO, path: 'p' } })).toEqual(plain);
    const none = { source: {} };
    expect(withoutSourceCredentials(none)).toBe(none);
  });
});
