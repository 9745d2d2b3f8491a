// After a prune its controller carries out, the preview says what the controller has done with the stamped objects
// since (handover.ts): waiting while one is still live, deleted once none is, lapsed when one outlived its
// approval listing, unknown when they cannot be read. Against the in-memory apiserver of approvals-fixture.ts and
// a real SQLite evidence store; time is injected.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { dev, FakeCluster, noDenial, rev1, setup } from './approvals-fixture.ts';
import { handoverOf } from './handover.ts';
import { previewSeenBy } from './approvals.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-handover-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = () => SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
const KEEP = ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];

async function approved(t: ReturnType<typeof setup>) {
  const { preview } = await t.service.create(t.app, dev);
  await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
  await t.service.settled();
  return preview.id;
}

describe('the handover of a prune to its controller', () => {
  it('waiting while a stamped object is live, deleted once the controller pruned them all', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a', 'b'] });
    const id = await approved(t);
    let v = await t.service.view(id, rev1);
    expect(v.preview.status).toBe('done');
    expect(v.handover).toMatchObject({ state: 'waiting', controller: 'kustomize-controller', stamped: 2 });
    expect(v.handover?.live.map((o) => o.split('/').pop())).toEqual(['a', 'b']);
    expect(v.handover?.text).toBe(
      'waiting for kustomize-controller: 2 of 2 approved objects still live; its next prune deletes them',
    );
    // the controller prunes one: still waiting on the other
    t.cluster.remove('a');
    v = await t.service.view(id, rev1);
    expect(v.handover).toMatchObject({ state: 'waiting' });
    expect(v.handover?.live.map((o) => o.split('/').pop())).toEqual(['b']);
    // one made again under the same name (another uid) is not the approved object: deleted
    t.cluster.remove('b');
    t.cluster.add('b');
    v = await t.service.view(id, rev1);
    expect(v.handover).toMatchObject({ state: 'deleted', live: [], text: 'kustomize-controller deleted 2 objects' });
  });

  it('lapsed: still live past its listing’s expiry (the controller may no longer delete it)', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a'], ttlMs: 60_000 });
    const id = await approved(t);
    const p = await t.deps.store.get(id);
    const journal = await t.deps.store.journal(id);
    if (!p) throw new Error('no preview');
    expect((await handoverOf(t.ctx, p, journal, Date.now() + 30_000))?.state).toBe('waiting');
    const late = await handoverOf(t.ctx, p, journal, Date.now() + 61_000);
    expect(late?.state).toBe('lapsed');
    expect(late?.text).toMatch(/^the approval lapsed before kustomize-controller deleted 1 object: it stays/);
  });

  it('unknown (never "deleted") when a stamped object cannot be read', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a'] });
    const id = await approved(t);
    t.cluster.failing.add('/api/v1/namespaces/dev/configmaps/a');
    const v = await t.service.view(id, rev1);
    expect(v.handover?.state).toBe('unknown');
    expect(v.handover?.text).toMatch(/^whether kustomize-controller deleted the stamped objects is unknown: /);
  });

  it('unknown while the informer cache of a watched kind has not listed yet (absent is not "deleted")', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a'] });
    const id = await approved(t);
    t.cluster.remove('a');
    let listed = false;
    Object.assign(t.deps.index, { watches: () => true, listed: () => listed, get: () => undefined });
    const v = await t.service.view(id, rev1);
    expect(v.handover?.state).toBe('unknown');
    expect(v.handover?.text).toMatch(/ConfigMap objects on nonprod are not read yet/);
    listed = true;
    expect((await t.service.view(id, rev1)).handover?.state).toBe('deleted');
  });

  it('none for a prune the console carried out, or one not done', async () => {
    const t = setup(store(), {
      controller: 'flux',
      inGit: KEEP,
      live: [...KEEP, 'a'],
      cluster: new FakeCluster({ governed: false }),
    });
    const id = await approved(t);
    const v = await t.service.view(id, rev1);
    expect(v.preview.status).toBe('done');
    expect(v.journal.map((j) => j.state)).toEqual(['deleted']);
    expect(v.handover).toBeUndefined();
    const u = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a'] });
    const { preview } = await u.service.create(u.app, dev);
    expect((await u.service.view(preview.id, rev1)).handover).toBeUndefined();
  });

  it('a reader who cannot see an object does not get its name from the handover', async () => {
    const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a', 'b'] });
    const id = await approved(t);
    const v = await t.service.view(id, rev1);
    const { view } = await previewSeenBy(v, async (items, refOf) => {
      const hidden = items.filter((x) => refOf(x).name === 'b');
      return { visible: items.filter((x) => !hidden.includes(x)), hidden, message: '1 hidden' };
    });
    expect(view.handover?.live.map((o) => o.split('/').pop())).toEqual(['a']);
  });
});
