// When the controller prunes itself (Flux `prune: true`, Argo CD automated prune) an approved preview is not
// deleted by the console in a governed namespace: it lists each object's uid in the approvals ConfigMap (what the
// admission policy lets the controller delete), notes the approval on the object (merge patch, uid +
// resourceVersion as preconditions) and the controller's prune deletes them. Argo CD `Prune=confirm` also gets
// deletion-approved, only when the app's pending deletions are exactly the approved objects. Outside a governed
// namespace (or without the policy) the console deletes itself. A failed prune withdraws its listings. Against
// the in-memory apiserver of approvals-fixture.ts and a real SQLite evidence store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { decodeEntry } from '../../domain/prune-approval.ts';
import { dev, FakeCluster, noDenial, rev1, setup } from './approvals-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-stamp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = () => SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);

const STAMP = 'gitops-console.dev/prune-approved';
const APPROVED = 'argocd.argoproj.io/deletion-approved';
const KEEP = ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];

async function approveAndRun(t: ReturnType<typeof setup>) {
  const { preview } = await t.service.create(t.app, dev);
  await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
  await t.service.settled();
  const v = await t.service.view(preview.id, rev1);
  return { preview, v, stamp: `${preview.id}/${preview.snapshotHash.slice(0, 16)}` };
}

describe('approved prunes the controller carries out', () => {
  it('Flux prune: true: lists each uid in the approvals, notes it with preconditions, deletes nothing itself', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a', 'b'] });
    const uidA = t.cluster.cm('a')?.metadata.uid ?? '';
    const { preview, v, stamp } = await approveAndRun(t);
    expect(preview.doc.deletedBy).toBe('controller');
    expect(v.preview.status).toBe('done');
    expect(v.preview.statusReason).toBe(
      "2 objects stamped with the approval: kustomize-controller's next prune deletes them",
    );
    expect(v.journal.map((j) => [j.object.split('/').pop(), j.state, j.detail])).toEqual([
      ['a', 'stamped', stamp],
      ['b', 'stamped', stamp],
    ]);
    expect(t.cluster.deletes).toEqual([]);
    // the approval the policy reads: the uid, with the preview, the snapshot and when it lapses
    const data = t.cluster.approvals() ?? {};
    expect(Object.keys(data).sort()).toEqual([uidA, t.cluster.cm('b')?.metadata.uid].sort());
    const entry = decodeEntry(data[uidA] ?? '');
    expect(entry).toMatchObject({
      preview: preview.id,
      snapshot: preview.snapshotHash.slice(0, 16),
      object: 'nonprod/core/ConfigMap/dev/a',
      ref: { group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'a' },
      app: t.app.id,
      observed: 'main@sha1:0',
    });
    expect(Date.parse(entry?.expires ?? '') - Date.now()).toBeGreaterThan(3_500_000);
    // the note on the object, with the uid and resourceVersion preconditions; after its listing
    expect(t.cluster.cm('a')?.metadata.annotations).toEqual({ [STAMP]: stamp });
    expect(t.cluster.cm('keep')?.metadata.annotations).toEqual({});
    const paths = t.cluster.patches.map((p) => p.path.split('?')[0] ?? '');
    const listing = paths.findIndex((p) => p.endsWith('/gitops-console-prune-approvals'));
    const note = paths.findIndex((p) => p.endsWith('/configmaps/a'));
    expect(listing).toBeGreaterThanOrEqual(0);
    expect(note).toBeGreaterThan(listing);
    expect(t.cluster.patches[note]?.body).toMatchObject({
      metadata: { uid: uidA, resourceVersion: expect.any(String) },
    });
    const events = (await t.ev.list({ limit: 500 })).reverse();
    const intent = events.find((e) => e.type === 'prune.stamp' && String(e.data.object).endsWith('/a'));
    expect(intent?.data).toMatchObject({
      annotation: { [STAMP]: stamp },
      approval: { configMap: 'gitops-console-approvals/gitops-console-prune-approvals', key: uidA },
    });
    const outcome = events.find((e) => e.type === 'action.completed' && e.data.intentSeq === intent?.seq);
    expect(outcome?.data).toMatchObject({ action: 'prune.stamp', resourceVersion: expect.any(String) });
    expect(events.find((e) => e.type === 'prune.executed')?.data).toMatchObject({
      deletedBy: 'controller',
      stamped: 2,
    });
    // no deletion-approved for Flux
    expect(t.cluster.application.metadata.annotations).toEqual({});
  });

  it('an object changed after the approval is neither listed nor noted: stopped (409)', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a', 'b'] });
    const { preview } = await t.service.create(t.app, dev);
    // the approval's snapshot check still sees the preview's version; then someone changes the object
    t.cluster.before = (method, path) => {
      if (method === 'PATCH' && path.includes('/configmaps/a?')) t.cluster.touch('a');
    };
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
    await t.service.settled();
    const v = await t.service.view(preview.id, rev1);
    expect(v.preview.status).toBe('failed');
    expect(v.preview.statusReason).toMatch(/changed since the preview \(precondition failed\): stopped/);
    expect(v.journal.map((j) => j.state)).toEqual(['failed', 'not-deleted']);
    // listed a moment, withdrawn when the note's precondition failed: nothing approved is left
    expect(t.cluster.approvals()).toEqual({});
    expect(t.cluster.cm('a')?.metadata.annotations).toEqual({});
    expect(t.cluster.cm('b')?.metadata.annotations).toEqual({});
  });

  it('a failed prune withdraws the approvals it listed in earlier batches (their rows: not deleted)', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a', 'b'], batchSize: 1 });
    const { preview } = await t.service.create(t.app, dev);
    // b changes once a is listed (batch 1): its own listing is refused (batch 2)
    t.cluster.before = (method, path) => {
      if (method === 'PATCH' && path.includes('/configmaps/a?')) t.cluster.touch('b');
    };
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
    await t.service.settled();
    const v = await t.service.view(preview.id, rev1);
    expect(v.preview.status).toBe('failed');
    expect(v.journal.map((j) => [j.object.split('/').pop(), j.state])).toEqual([
      ['a', 'not-deleted'],
      ['b', 'failed'],
    ]);
    expect(v.journal[0]?.detail).toMatch(/^approval withdrawn before the controller pruned it: the prune failed/);
    expect(t.cluster.approvals()).toEqual({});
    expect(t.cluster.cm('a')?.metadata.annotations).toEqual({});
    const withdrawn = (await t.ev.list({ limit: 500 })).filter((e) => e.type === 'prune.stamp' && e.data.withdrawn);
    expect(withdrawn.map((e) => String(e.data.object).split('/').pop())).toEqual(['a']);
  });

  it('outside a governed namespace the console deletes itself (preconditions), listing nothing', async () => {
    const t = setup(store(), {
      controller: 'flux',
      inGit: KEEP,
      live: [...KEEP, 'a'],
      cluster: new FakeCluster({ governed: false }),
    });
    const uid = t.cluster.cm('a')?.metadata.uid;
    const { v } = await approveAndRun(t);
    expect(v.preview.status).toBe('done');
    expect(v.journal.map((j) => [j.state, j.detail])).toEqual([
      ['deleted', "namespace dev is not governed: the controller's prune of it is not held, so the console deletes it"],
    ]);
    expect(t.cluster.deletes).toHaveLength(1);
    expect(t.cluster.deletes[0]?.body).toMatchObject({ preconditions: { uid } });
    expect(t.cluster.cm('a')).toBeUndefined();
    expect(t.cluster.approvals()).toEqual({});
    const intent = (await t.ev.list({ limit: 500 })).find((e) => e.type === 'prune.delete');
    expect(intent?.data.because).toMatch(/namespace dev is not governed/);
  });

  it('without the admission policy in the cluster the console deletes itself, and says why', async () => {
    const t = setup(store(), {
      controller: 'flux',
      inGit: KEEP,
      live: [...KEEP, 'a'],
      cluster: new FakeCluster({ installed: false }),
    });
    const { v } = await approveAndRun(t);
    expect(v.preview.status).toBe('done');
    expect(v.journal[0]?.detail).toMatch(/the prune admission policy is not installed in cluster nonprod/);
    expect(t.cluster.cm('a')).toBeUndefined();
    expect(t.cluster.approvals()).toBeUndefined();
  });

  it('Argo CD with Prune=confirm: the listing, then deletion-approved when the pending deletions are exactly it', async () => {
    const t = setup(store(), { controller: 'argocd', inGit: KEEP, live: [...KEEP, 'a'] });
    t.cluster.application.status = {
      resources: [
        { group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'a', requiresPruning: true },
        { group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'keep' },
      ],
    };
    const { v } = await approveAndRun(t);
    expect(v.preview.status).toBe('done');
    expect(v.journal.map((j) => j.state)).toEqual(['stamped']);
    expect(Object.keys(t.cluster.approvals() ?? {})).toEqual([t.cluster.cm('a')?.metadata.uid]);
    const approved = t.cluster.application.metadata.annotations[APPROVED];
    expect(Date.parse(approved ?? '')).toBeGreaterThan(Date.now() - 60_000);
    const paths = t.cluster.patches.map((p) => p.path);
    expect(paths[paths.length - 1]).toMatch(/applications\/web\?fieldManager=gitops-console$/);
    const ev = (await t.ev.list({ limit: 500 })).find((e) => e.type === 'prune.deletion-approved');
    expect(ev?.data.pending).toEqual(['/ConfigMap/dev/a']);
  });

  it('Argo CD: another pending deletion besides the approved ones: no deletion-approved, stopped, withdrawn', async () => {
    const t = setup(store(), { controller: 'argocd', inGit: KEEP, live: [...KEEP, 'a'] });
    t.cluster.application.status = {
      resources: [
        { group: '', version: 'v1', kind: 'ConfigMap', namespace: 'dev', name: 'a', requiresPruning: true },
        { group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name: 'web', requiresPruning: true },
      ],
    };
    const { v } = await approveAndRun(t);
    expect(v.preview.status).toBe('failed');
    expect(v.preview.statusReason).toBe(
      "argocd.argoproj.io/deletion-approved not written: the Application's pending deletions are not exactly the approved objects; pending but not approved: apps/Deployment/dev/web",
    );
    expect(t.cluster.application.metadata.annotations[APPROVED]).toBeUndefined();
    expect(t.cluster.approvals()).toEqual({});
    expect(v.journal.map((j) => j.state)).toEqual(['not-deleted']);
  });
});
