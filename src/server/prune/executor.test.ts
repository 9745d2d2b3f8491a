// Executing an approved prune: batches stop at the first failure and the rest is reported not deleted.
// Against the in-memory cluster of test-fixture.ts and a real SQLite evidence store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dev, rev1, rev2, rev3, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-executor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A developer requests the preview, two reviewers approve it; waits for the execution; the reviewer's view. */
async function requestApproveRun(t: ReturnType<typeof setup>) {
  const { preview } = await t.service.create(t.app, dev);
  const confirmation = preview.doc.confirmation ?? '';
  for (const reviewer of [rev1, rev2])
    await t.service.decide(preview.id, reviewer, { decision: 'approve', comment: 'ok', confirmation }, t.onDenied);
  await t.service.settled();
  return t.service.view(preview.id, rev3);
}

describe('PruneService executions', () => {
  it('batches stop at the first failure; the rest is reported not deleted', async () => {
    const t = setup(dir, { inGit: [], live: ['a', 'b', 'c', 'd'], batchSize: 2 });
    t.cluster.failDelete.add('b');
    const v = await requestApproveRun(t);
    expect(v.preview.status).toBe('failed');
    expect(v.journal.map((j) => [j.object.split('/').pop(), j.state])).toEqual([
      ['a', 'deleted'],
      ['b', 'failed'],
      ['c', 'not-deleted'],
      ['d', 'not-deleted'],
    ]);
    expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a', 'b']);
  });

  it('a DELETE the cluster never answered: fenced, journal `failed` (not `deleting`); the held DELETE, when it comes, deletes nothing', async () => {
    const t = setup(dir, { inGit: [], live: ['a', 'b', 'c', 'd'], batchSize: 2 });
    t.cluster.hangDelete.add('b');
    const v = await requestApproveRun(t);
    expect(v.preview.status).toBe('failed');
    expect(v.journal.map((j) => [j.object.split('/').pop(), j.state])).toEqual([
      ['a', 'deleted'],
      ['b', 'failed'],
      ['c', 'not-deleted'],
      ['d', 'not-deleted'],
    ]);
    expect(v.journal[1]?.detail).toMatch(/did not answer.*not deleted/);
    t.cluster.applyLate();
    expect([...t.cluster.objects.keys()].sort()).toEqual(['b', 'c', 'd']);
    expect(
      (t.cluster.objects.get('b') as { metadata: { annotations: Record<string, string> } }).metadata.annotations,
    ).toEqual({});
  });

  it('a DELETE the cluster took without answering: the read-back finds it gone, journal `deleted`, the prune goes on', async () => {
    const t = setup(dir, { inGit: [], live: ['a', 'b', 'c', 'd'], batchSize: 2 });
    t.cluster.hangDelete.add('b');
    t.cluster.continueOnRead = true;
    const v = await requestApproveRun(t);
    expect(v.preview.status).toBe('done');
    expect(v.journal.map((j) => j.state)).toEqual(['deleted', 'deleted', 'deleted', 'deleted']);
    expect(t.cluster.objects.size).toBe(0);
  });

  it('an app Progressing between batches (a routine reconcile) is given time to settle: Healthy again, it goes on; still Progressing, it stops', async () => {
    for (const settles of [true, false]) {
      const t = setup(dir, { inGit: [], live: ['a', 'b', 'c', 'd'], batchSize: 2, settleMs: 300 });
      // after the first batch the app reconciles: Progressing for 100 ms, or for good
      let since = 0;
      t.deps.app = () => {
        if (t.cluster.deletes.length >= 2 && !since) since = Date.now();
        const progressing = since > 0 && (!settles || Date.now() - since < 100);
        return { ...t.app, health: progressing ? 'Progressing' : 'Healthy' };
      };
      const v = await requestApproveRun(t);
      if (settles) {
        expect(v.preview.status).toBe('done');
        expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a', 'b', 'c', 'd']);
      } else {
        expect(v.preview.status).toBe('failed');
        expect(v.preview.statusReason).toContain('regressed from Healthy to Progressing');
        expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a', 'b']);
      }
    }
  });
});
