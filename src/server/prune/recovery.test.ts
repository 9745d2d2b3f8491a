// Recovery after a crash mid-batch: the journal says exactly what was deleted; nothing is deleted twice.
// Against the in-memory cluster of test-fixture.ts and a real SQLite evidence store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { identityOf } from './identity.ts';
import { PruneService } from './service.ts';
import { dev, rev1, rev2, rev3, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-recovery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PruneService recovery', () => {
  it('after a crash mid-batch the journal says exactly what was deleted; nothing is deleted twice', async () => {
    const t = setup(dir, { inGit: [], live: ['a', 'b', 'c'] });
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
