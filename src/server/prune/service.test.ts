// The prune service's decisions and execution against an in-memory cluster (ConfigMaps only) and a real
// SQLite evidence store: who may approve, typed confirmation, void on a changed snapshot, exactly one
// execution, DELETE preconditions, batches that stop at the first failure, and recovery after a crash.
// The same paths run against the real sandbox in test/integration/prune.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import type { Principal } from '../auth/sessions.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { KubeError, type ClusterConnection, type KubeResponse } from '../kube/connection.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import {
  identityOf,
  PruneService,
  samePerson,
  type PreviewDoc,
  type PruneServiceDeps,
} from './service.ts';
import type { RenderResult } from '../diff/render.ts';
import { PruneStore } from './store.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Obj = Record<string, unknown>;
const user = (name: string, ...grants: string[]): Principal => ({
  name,
  source: 'local',
  groups: [],
  grants: grants.map(parseGrant),
});
const dev = user('dev', 'developer@prod/prod');
const rev1 = user('rev1', 'reviewer@prod/prod');
const rev2 = user('rev2', 'reviewer@prod/prod');
const rev3 = user('rev3', 'reviewer@prod/prod');

/** A tiny apiserver for ConfigMaps in namespace prod: GET, and DELETE with uid/resourceVersion preconditions. */
class FakeCluster {
  objects = new Map<string, Obj>();
  deletes: Array<{ name: string; body: Obj }> = [];
  failDelete = new Set<string>();
  private rv = 100;
  add(name: string, annotations: Record<string, string> = {}): void {
    this.objects.set(name, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'prod', uid: `uid-${name}`, resourceVersion: String(++this.rv), annotations },
    });
  }
  touch(name: string): void {
    const o = this.objects.get(name) as { metadata: { resourceVersion: string } };
    o.metadata.resourceVersion = String(++this.rv);
  }
  conn(): ClusterConnection {
    const answer = (status: number, body: unknown): KubeResponse => ({
      status,
      headers: {},
      body: JSON.stringify(body),
    });
    const c = {
      request: async (method: string, path: string, opts: { body?: string } = {}): Promise<KubeResponse> => {
        const m = /^\/api\/v1\/namespaces\/prod\/configmaps\/([^/?]+)$/.exec(path);
        if (!m) return answer(404, {});
        const name = decodeURIComponent(m[1] ?? '');
        const o = this.objects.get(name) as { metadata: { uid: string; resourceVersion: string } } | undefined;
        if (method === 'GET') return o ? answer(200, o) : answer(404, {});
        if (method === 'DELETE') {
          const body = JSON.parse(opts.body ?? '{}') as { preconditions?: { uid?: string; resourceVersion?: string } };
          this.deletes.push({ name, body });
          if (this.failDelete.has(name)) return answer(500, { message: 'boom' });
          if (!o) return answer(404, {});
          const p = body.preconditions ?? {};
          if (p.uid !== o.metadata.uid || p.resourceVersion !== o.metadata.resourceVersion)
            return answer(409, { message: 'Precondition failed' });
          this.objects.delete(name);
          return answer(200, o);
        }
        return answer(405, {});
      },
      json: async (_m: string, path: string) => {
        if (path === '/api/v1') return { resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true }] };
        throw new KubeError('not found', 'prod', 404);
      },
      httpError: (res: KubeResponse, what: string) => new KubeError(`${what}: ${res.status}`, 'prod', res.status),
    };
    return c as unknown as ClusterConnection;
  }
}

const ref = (name: string): ObjectRef => ({
  cluster: 'prod',
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  namespace: 'prod',
  name,
});

function setup(opts: { inGit: string[]; live: string[]; render?: () => Promise<RenderResult>; batchSize?: number }) {
  const cluster = new FakeCluster();
  for (const n of opts.live) cluster.add(n);
  const ev = SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  const recorder = new EvidenceRecorder(ev, { warn() {}, error() {} });
  const app: App = {
    id: 'prod/flux-system/kustomization/app',
    cluster: 'prod',
    controller: 'flux',
    kind: 'Kustomization',
    namespace: 'flux-system',
    name: 'app',
    env: 'prod',
    source: { revisionWanted: 'main@sha1:1' },
    automation: { autoSync: true, selfHeal: true, prune: false, suspended: false },
    sync: 'Synced',
    health: 'Healthy',
    healthMessage: '',
    conditions: [],
    inventory: opts.live.map(ref),
    warnings: [],
  };
  const index = {
    watches: () => false,
    get: () => undefined,
    trackedBy: () => [],
    childrenOf: () => [],
  } as unknown as ObjectIndex;
  const deps: PruneServiceDeps = {
    recorder,
    store: new PruneStore<PreviewDoc>(ev),
    index,
    app: () => app,
    conn: () => cluster.conn(),
    listed: () => true,
    render:
      opts.render ??
      (async () => ({
        objects: opts.inGit.map((n) => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: n, namespace: 'prod' },
        })),
        renderer: 'test',
        revision: 'main@sha1:1',
        renderHash: 'h',
      })),
  };
  const service = new PruneService(deps, { batchSize: opts.batchSize ?? 10 });
  const denied: string[] = [];
  const onDenied = (reason: string) => denied.push(reason);
  return { cluster, app, service, deps, ev, denied, onDenied };
}

describe('who is the same person', () => {
  it.each([
    [
      { issuer: 'console', subject: 'alice', name: 'alice' },
      { issuer: 'console', subject: 'alice', name: 'alice' },
      true,
    ],
    [
      { issuer: 'console', subject: 'alice', name: 'alice' },
      { issuer: 'https://idp', subject: '123', name: 'oidc:alice' },
      true,
    ],
    [
      { issuer: 'https://idp', subject: '123', name: 'oidc:a' },
      { issuer: 'https://idp', subject: '123', name: 'oidc:b' },
      true,
    ],
    [{ issuer: 'console', subject: 'alice', name: 'alice' }, { issuer: 'console', subject: 'bob', name: 'bob' }, false],
  ])('%o vs %o → %s', (a, b, same) => expect(samePerson(a, b)).toBe(same));
  it('local accounts are issued by the console', () =>
    expect(identityOf(dev)).toEqual({ issuer: 'console', subject: 'dev', name: 'dev' }));
});

describe('PruneService', () => {
  let t: ReturnType<typeof setup>;

  it('plans, refuses the requester and non-reviewers, approves once, deletes with preconditions, records evidence', async () => {
    // 3 of 13: under the 25% default limit
    t = setup({
      inGit: ['keep', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'],
      live: ['keep', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'],
    });
    const { preview } = await t.service.create(t.app, dev);
    expect(preview.status).toBe('pending');
    expect(preview.doc.planState).toBe('ready');
    expect(preview.doc.candidates.map((c) => c.ref.name)).toEqual(['a', 'b', 'c']);
    await expect(
      t.service.decide(preview.id, dev, { decision: 'approve', comment: 'x' }, t.onDenied),
    ).rejects.toMatchObject({ status: 403 });
    const own = (await t.service.create(t.app, rev1)).preview;
    await expect(
      t.service.decide(own.id, rev1, { decision: 'approve', comment: 'x' }, t.onDenied),
    ).rejects.toMatchObject({ status: 403 });
    expect(t.denied).toHaveLength(2);
    // concurrent approvals: one wins, one execution
    const results = await Promise.allSettled([
      t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied),
      t.service.decide(preview.id, rev2, { decision: 'approve', comment: 'ok' }, t.onDenied),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    await t.service.settled();
    const done = await t.service.view(preview.id, rev3);
    expect(done.preview.status).toBe('done');
    expect(done.journal.map((j) => j.state)).toEqual(['deleted', 'deleted', 'deleted']);
    expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a', 'b', 'c']);
    expect(t.cluster.deletes[0]?.body).toMatchObject({
      preconditions: { uid: 'uid-a', resourceVersion: expect.any(String) },
      propagationPolicy: 'Background',
    });
    const types = (await t.ev.list({ limit: 500 })).map((e) => e.type);
    for (const ty of ['prune.requested', 'prune.approved', 'prune.batch', 'prune.delete', 'prune.executed'])
      expect(types).toContain(ty);
    // the other pending preview's snapshot is gone
    await expect(
      t.service.decide(own.id, rev2, { decision: 'approve', comment: 'late' }, t.onDenied),
    ).rejects.toMatchObject({ status: 409 });
    expect((await t.service.view(own.id, rev3)).preview.status).toBe('void');
  });

  it('a changed object voids the approval; nothing is deleted', async () => {
    t = setup({
      inGit: ['keep', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
      live: ['keep', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
    });
    const { preview } = await t.service.create(t.app, dev);
    t.cluster.touch('a');
    await expect(
      t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied),
    ).rejects.toMatchObject({ status: 409 });
    expect((await t.service.view(preview.id, rev1)).preview).toMatchObject({ status: 'void' });
    expect(t.cluster.deletes).toEqual([]);
  });

  it('an empty render needs two approvers and the typed confirmation', async () => {
    t = setup({ inGit: [], live: ['a', 'b'] });
    const { preview } = await t.service.create(t.app, dev);
    expect(preview.doc.planState).toBe('needs-override');
    expect(preview.requiredApprovals).toBe(2);
    await expect(
      t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied),
    ).rejects.toMatchObject({ status: 400 });
    const confirmation = preview.doc.confirmation ?? '';
    const first = await t.service.decide(
      preview.id,
      rev1,
      { decision: 'approve', comment: 'ok', confirmation },
      t.onDenied,
    );
    expect(first.preview.status).toBe('pending');
    expect(t.cluster.deletes).toEqual([]);
    await t.service.decide(preview.id, rev2, { decision: 'approve', comment: 'ok too', confirmation }, t.onDenied);
    await t.service.settled();
    expect((await t.service.view(preview.id, rev3)).preview.status).toBe('done');
    expect(t.cluster.objects.size).toBe(0);
  });

  it('a failed render is unknown: no candidates, nothing to approve', async () => {
    t = setup({ inGit: [], live: ['a'], render: () => Promise.reject(new Error('kustomize build failed')) });
    const { preview } = await t.service.create(t.app, dev);
    expect(preview).toMatchObject({ status: 'void', doc: { planState: 'unknown', candidates: [] } });
    expect(preview.doc.reasons[0]).toMatch(/kustomize build failed/);
  });

  it('protected objects are listed and never deleted', async () => {
    t = setup({
      inGit: ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i'],
      live: ['keep', 'a', 'c', 'd', 'e', 'f', 'g', 'h', 'i'],
    });
    t.cluster.add('p', { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' });
    t.app.inventory.push(ref('p'));
    const { preview } = await t.service.create(t.app, dev);
    expect(preview.doc.candidates.find((c) => c.ref.name === 'p')).toMatchObject({
      deletable: false,
      protectedBy: 'kustomize.toolkit.fluxcd.io/prune: disabled',
    });
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied);
    await t.service.settled();
    expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a']);
    expect(t.cluster.objects.has('p')).toBe(true);
  });

  it('batches stop at the first failure; the rest is reported not deleted', async () => {
    t = setup({ inGit: [], live: ['a', 'b', 'c', 'd'], batchSize: 2 });
    t.cluster.failDelete.add('b');
    const { preview } = await t.service.create(t.app, dev);
    const confirmation = preview.doc.confirmation ?? '';
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok', confirmation }, t.onDenied);
    await t.service.decide(preview.id, rev2, { decision: 'approve', comment: 'ok', confirmation }, t.onDenied);
    await t.service.settled();
    const v = await t.service.view(preview.id, rev3);
    expect(v.preview.status).toBe('failed');
    expect(v.journal.map((j) => [j.object.split('/').pop(), j.state])).toEqual([
      ['a', 'deleted'],
      ['b', 'failed'],
      ['c', 'not-deleted'],
      ['d', 'not-deleted'],
    ]);
    expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a', 'b']);
  });

  it('after a crash mid-batch the journal says exactly what was deleted; nothing is deleted twice', async () => {
    t = setup({ inGit: [], live: ['a', 'b', 'c'] });
    const { preview } = await t.service.create(t.app, dev);
    const store = t.deps.store;
    // what a killed process leaves: claimed, a deleted, b in flight (its DELETE went through), c planned
    await store.decide(preview.id, {
      ...identityOf(rev1),
      decision: 'approve',
      comment: 'ok',
      time: new Date().toISOString(),
    });
    await store.decide(preview.id, {
      ...identityOf(rev2),
      decision: 'approve',
      comment: 'ok',
      time: new Date().toISOString(),
    });
    const entries = preview.doc.candidates.map((c) => ({
      batch: 0,
      object: c.id,
      uid: c.uid ?? '',
      resourceVersion: c.resourceVersion ?? '',
    }));
    expect(await store.claim(preview.id, 'dead-host/1/x', entries, new Date(Date.now() - 600_000).toISOString())).toBe(
      true,
    );
    const now = new Date(Date.now() - 600_000).toISOString();
    await store.mark(preview.id, 0, ['planned'], 'deleting', null, now);
    await store.mark(preview.id, 0, ['deleting'], 'deleted', '200', now);
    await store.mark(preview.id, 1, ['planned'], 'deleting', null, now);
    t.cluster.objects.delete('a');
    t.cluster.objects.delete('b');
    const restarted = new PruneService(t.deps, { staleExecutionMs: 60_000 });
    expect(await restarted.recover()).toEqual([preview.id]);
    const v = await restarted.view(preview.id, rev3);
    expect(v.preview.status).toBe('failed');
    expect(v.preview.statusReason).toMatch(/2 deleted, 1 not deleted/);
    expect(v.journal.map((j) => j.state)).toEqual(['deleted', 'deleted', 'not-deleted']);
    expect(t.cluster.deletes).toEqual([]);
    expect(t.cluster.objects.has('c')).toBe(true);
  });
});
