// When the controller prunes itself (Flux `prune: true`, Argo CD automated prune) an approved preview is not
// deleted by the console: it stamps its approval on each object (merge patch, uid + resourceVersion as
// preconditions) and the controller's prune deletes them (deploy/prune-admission-policy.yaml lets it). Argo CD
// `Prune=confirm` also gets deletion-approved. Against an in-memory apiserver and a real SQLite evidence store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import type { Principal } from '../auth/sessions.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { KubeError, type ClusterConnection, type KubeResponse } from '../kube/connection.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import type { PreviewDoc } from './model.ts';
import { PruneService } from './service.ts';
import { PruneStore } from './store.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-stamp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Obj = Record<string, unknown>;
type Meta = { name: string; uid: string; resourceVersion: string; annotations: Record<string, string> };
const user = (name: string, ...grants: string[]): Principal => ({
  name,
  source: 'local',
  groups: [],
  grants: grants.map(parseGrant),
});
const dev = user('dev', 'developer@nonprod/dev');
const rev1 = user('rev1', 'reviewer@nonprod/dev');

/** ConfigMaps in namespace dev and one Argo CD Application: GET, merge PATCH (with preconditions) and DELETE. */
class FakeCluster {
  objects = new Map<string, { metadata: Meta } & Obj>();
  patches: Array<{ path: string; body: Obj }> = [];
  deletes: string[] = [];
  application: { metadata: Meta } & Obj = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'web', uid: 'uid-app', resourceVersion: '1', annotations: {} },
    spec: { syncPolicy: { automated: { prune: true }, syncOptions: ['Prune=confirm'] } },
  };
  private rv = 100;
  add(name: string): void {
    this.objects.set(name, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, uid: `uid-${name}`, resourceVersion: String(++this.rv), annotations: {} },
    });
  }
  touch(name: string): void {
    const o = this.objects.get(name);
    if (o) o.metadata.resourceVersion = String(++this.rv);
  }
  conn(): ClusterConnection {
    const answer = (status: number, body: unknown): KubeResponse => ({
      status,
      headers: {},
      body: JSON.stringify(body),
    });
    const c = {
      request: async (method: string, path: string, opts: { body?: string } = {}): Promise<KubeResponse> => {
        const [p] = path.split('?');
        const cm = /^\/api\/v1\/namespaces\/dev\/configmaps\/([^/]+)$/.exec(p ?? '');
        const app = p === '/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/web';
        const o = app ? this.application : cm ? this.objects.get(decodeURIComponent(cm[1] ?? '')) : undefined;
        if (method === 'GET') return o ? answer(200, o) : answer(404, {});
        if (method === 'DELETE') {
          this.deletes.push(path);
          return answer(405, {});
        }
        if (method === 'PATCH') {
          const body = JSON.parse(opts.body ?? '{}') as { metadata: Partial<Meta> };
          this.patches.push({ path, body });
          if (!o) return answer(404, {});
          const m = body.metadata;
          if (
            (m.uid && m.uid !== o.metadata.uid) ||
            (m.resourceVersion && m.resourceVersion !== o.metadata.resourceVersion)
          )
            return answer(409, { message: 'the object has been modified' });
          Object.assign(o.metadata.annotations, m.annotations ?? {});
          o.metadata.resourceVersion = String(++this.rv);
          return answer(200, o);
        }
        return answer(405, {});
      },
      json: async (_m: string, path: string) => {
        if (path === '/api/v1') return { resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true }] };
        if (path === '/apis/argoproj.io/v1alpha1')
          return { resources: [{ name: 'applications', kind: 'Application', namespaced: true }] };
        throw new KubeError('not found', 'nonprod', 404);
      },
      httpError: (res: KubeResponse, what: string) => new KubeError(`${what}: ${res.status}`, 'nonprod', res.status),
    };
    return c as unknown as ClusterConnection;
  }
}

function setup(controller: 'flux' | 'argocd', inGit: string[], live: string[]) {
  const cluster = new FakeCluster();
  for (const n of live) cluster.add(n);
  const ev = SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  const recorder = new EvidenceRecorder(ev, { warn() {}, error() {} });
  const app: App = {
    id: controller === 'flux' ? 'nonprod/flux-system/kustomization/web' : 'nonprod/argocd/application/web',
    cluster: 'nonprod',
    controller,
    kind: controller === 'flux' ? 'Kustomization' : 'Application',
    namespace: controller === 'flux' ? 'flux-system' : 'argocd',
    name: 'web',
    env: 'dev',
    source: { revisionWanted: 'main@sha1:1' },
    automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
    sync: 'Synced',
    health: 'Healthy',
    healthMessage: '',
    conditions: [],
    inventory: live.map((name) => ({
      cluster: 'nonprod',
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      namespace: 'dev',
      name,
    })),
    warnings: [],
  };
  const index = { watches: () => false, get: () => undefined, trackedBy: () => [], childrenOf: () => [] };
  const service = new PruneService({
    recorder,
    store: new PruneStore<PreviewDoc>(ev),
    index: index as unknown as ObjectIndex,
    app: () => app,
    conn: () => cluster.conn(),
    listed: () => true,
    render: async () => ({
      objects: inGit.map((n) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: 'dev' } })),
      renderer: 'test',
      revision: 'main@sha1:1',
      renderHash: 'h',
    }),
  });
  return { cluster, app, service, ev };
}

const noDenial = () => undefined;

describe('approved prunes the controller carries out', () => {
  it('Flux prune: true: stamps each approved object with preconditions, deletes nothing itself, evidence intent + outcome', async () => {
    const t = setup(
      'flux',
      ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
      ['keep', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
    );
    const { preview } = await t.service.create(t.app, dev);
    expect(preview.doc.deletedBy).toBe('controller');
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
    await t.service.settled();
    const v = await t.service.view(preview.id, rev1);
    expect(v.preview.status).toBe('done');
    expect(v.preview.statusReason).toBe(
      "2 objects stamped with the approval: kustomize-controller's next prune deletes them",
    );
    const stamp = `${preview.id}/${preview.snapshotHash.slice(0, 16)}`;
    expect(v.journal.map((j) => [j.object.split('/').pop(), j.state, j.detail])).toEqual([
      ['a', 'stamped', stamp],
      ['b', 'stamped', stamp],
    ]);
    expect(t.cluster.deletes).toEqual([]);
    expect(t.cluster.objects.get('a')?.metadata.annotations).toEqual({ 'gitops-console.dev/prune-approved': stamp });
    expect(t.cluster.objects.get('keep')?.metadata.annotations).toEqual({});
    const first = t.cluster.patches[0];
    expect(first?.path).toMatch(/configmaps\/a\?fieldManager=gitops-console$/);
    expect(first?.body).toMatchObject({ metadata: { uid: 'uid-a', resourceVersion: expect.any(String) } });
    const events = (await t.ev.list({ limit: 500 })).reverse();
    const intent = events.find((e) => e.type === 'prune.stamp' && String(e.data.object).endsWith('/a'));
    expect(intent?.data).toMatchObject({ annotation: { 'gitops-console.dev/prune-approved': stamp } });
    const outcome = events.find((e) => e.type === 'action.completed' && e.data.intentSeq === intent?.seq);
    expect(outcome?.data).toMatchObject({ action: 'prune.stamp', resourceVersion: expect.any(String) });
    expect(events.find((e) => e.type === 'prune.executed')?.data).toMatchObject({
      deletedBy: 'controller',
      stamped: 2,
    });
    // no deletion-approved for Flux
    expect(t.cluster.application.metadata.annotations).toEqual({});
  });

  it('an object changed after the approval is not stamped: the precondition stops the prune (409)', async () => {
    const t = setup(
      'flux',
      ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
      ['keep', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
    );
    const { preview } = await t.service.create(t.app, dev);
    // the approval's snapshot check still sees the preview's version; just before the first stamp lands, someone
    // changes the object: the merge patch's resourceVersion precondition refuses it
    const conn = t.cluster.conn.bind(t.cluster);
    t.cluster.conn = () => {
      const c = conn();
      const request = c.request.bind(c);
      c.request = async (method, path, opts) => {
        if (method === 'PATCH' && path.includes('/configmaps/a?')) t.cluster.touch('a');
        return request(method, path, opts);
      };
      return c;
    };
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
    await t.service.settled();
    const v = await t.service.view(preview.id, rev1);
    expect(v.preview.status).toBe('failed');
    expect(v.preview.statusReason).toMatch(/changed since the preview \(precondition failed\): stopped/);
    expect(v.journal.map((j) => j.state)).toEqual(['failed', 'not-deleted']);
    expect(t.cluster.objects.get('a')?.metadata.annotations).toEqual({});
    expect(t.cluster.objects.get('b')?.metadata.annotations).toEqual({});
  });

  it('Argo CD with Prune=confirm: the stamps, then deletion-approved on the Application', async () => {
    const t = setup(
      'argocd',
      ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
      ['keep', 'a', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
    );
    const { preview } = await t.service.create(t.app, dev);
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
    await t.service.settled();
    const v = await t.service.view(preview.id, rev1);
    expect(v.preview.status).toBe('done');
    expect(v.journal.map((j) => j.state)).toEqual(['stamped']);
    const approved = t.cluster.application.metadata.annotations['argocd.argoproj.io/deletion-approved'];
    expect(Date.parse(approved ?? '')).toBeGreaterThan(Date.now() - 60_000);
    const paths = t.cluster.patches.map((p) => p.path);
    expect(paths[paths.length - 1]).toMatch(/applications\/web\?fieldManager=gitops-console$/);
    expect((await t.ev.list({ limit: 500 })).some((e) => e.type === 'prune.deletion-approved')).toBe(true);
  });
});
