// Recovery after a crash mid-batch: the journal says exactly what was deleted; nothing is deleted twice. And an
// approved preview whose execution was never claimed is executed or voided after the snapshot is checked again.
// Against the in-memory cluster of test-fixture.ts and a real SQLite evidence store.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { identityOf } from '../auth/index.ts';
import { PruneService } from './service.ts';
import { dev, rev1, rev2, rev3, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-recovery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A prune of a, b and c approved by two reviewers and claimed by `executor` at `at`, nothing deleted yet. */
async function claimedPrune(executor: string, at: string) {
  const t = setup(dir, { inGit: [], live: ['a', 'b', 'c'] });
  const { preview } = await t.service.create(t.app, dev);
  const store = t.deps.store;
  for (const who of [rev1, rev2])
    await store.decide(preview.id, {
      ...identityOf(who),
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
  expect(await store.claim(preview.id, executor, entries, at)).toBe(true);
  return { t, preview, store };
}

describe('PruneService recovery', () => {
  it('after a crash mid-batch the journal says exactly what was deleted; nothing is deleted twice', async () => {
    // what a killed process leaves: claimed, a deleted, b in flight (its DELETE went through), c planned
    const { t, preview, store } = await claimedPrune('dead-host/1/x', new Date(Date.now() - 600_000).toISOString());
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

describe('PruneService: deletes left unknown in a failed prune are read again (chaos: unknown past the settle deadline)', () => {
  it('gone → deleted, still live → not deleted, unreadable → left; each finding recorded once', async () => {
    const now = new Date().toISOString();
    const { t, preview, store } = await claimedPrune(`${hostname()}/${process.pid}/x`, now);
    // what the executor leaves when three DELETEs got no answer within the settle deadline: a failed prune
    for (const i of [0, 1, 2]) await store.mark(preview.id, i, ['planned'], 'deleting', null, now);
    expect(await store.transition(preview.id, ['executing'], 'failed', 'DELETE: the cluster did not answer', now)).toBe(
      true,
    );
    t.cluster.objects.delete('a');
    // c's reads fail (the apiserver still away for it)
    const conn = t.cluster.conn();
    t.deps.conn = () =>
      ({
        ...conn,
        request: (method: string, path: string, o?: object) =>
          path.endsWith('/c') ? Promise.reject(new Error('ECONNREFUSED')) : conn.request(method, path, o),
      }) as typeof conn;
    const later = new PruneService(t.deps, { staleExecutionMs: 60_000 });
    await later.recover();
    const states = async () => (await later.view(preview.id, rev3)).journal.map((j) => j.state);
    expect(await states()).toEqual(['deleted', 'not-deleted', 'deleting']);
    expect(t.cluster.deletes).toEqual([]);
    await later.recover();
    await t.deps.recorder.flush();
    const settled = (await t.ev.list({ type: ['prune.settled'] })).map((e) => [e.data.object, e.data.state]);
    expect(settled.sort()).toEqual([
      [preview.doc.candidates[0]?.id, 'deleted'],
      [preview.doc.candidates[1]?.id, 'not-deleted'],
    ]);
    // the prune itself stays failed: its outcome was recorded once
    expect((await later.view(preview.id, rev3)).preview.status).toBe('failed');
  });
});

/** A pid no process of this host has any more. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid ?? 0;

describe('PruneService recovery of approvals never executed', () => {
  /** What a request leaves when it dies between the last approval and the claim: approved, nothing claimed. */
  async function stranded(liveNames: string[], executor: string) {
    const t = setup(dir, { inGit: [], live: liveNames });
    const { preview } = await t.service.create(t.app, dev);
    for (const who of [rev1, rev2])
      await t.deps.store.decide(
        preview.id,
        { ...identityOf(who), decision: 'approve', comment: 'ok', time: new Date().toISOString() },
        executor,
      );
    expect((await t.deps.store.get(preview.id))?.status).toBe('approved');
    return { t, id: preview.id };
  }

  it('this host’s dead process: the snapshot is checked again and the prune executes, with evidence', async () => {
    const { t, id } = await stranded(['a', 'b'], `${hostname()}/${deadPid()}/gone`);
    const restarted = new PruneService(t.deps, { staleExecutionMs: 60_000 });
    expect(await restarted.recover()).toEqual([id]);
    await restarted.settled();
    const v = await restarted.view(id, rev3);
    expect(v.preview.status).toBe('done');
    expect(v.journal.map((j) => j.state)).toEqual(['deleted', 'deleted']);
    expect(t.cluster.objects.size).toBe(0);
    const ev = (await t.ev.list({ limit: 100, order: 'asc' })).filter((e) => e.data.previewId === id);
    const resumed = ev.find((e) => e.type === 'prune.resumed');
    expect(resumed).toMatchObject({
      actor: 'console',
      data: { recovered: true, snapshotHash: v.preview.snapshotHash },
    });
    expect(ev.find((e) => e.type === 'action.completed' && e.data.intentSeq === resumed?.seq)?.data).toMatchObject({
      claimed: true,
    });
    expect(ev.filter((e) => e.type === 'prune.executed').map((e) => e.data.status)).toEqual(['done']);
    // and only once
    expect(await restarted.recover()).toEqual([]);
  });

  it('the live state changed since the approval: voided at restart, nothing deleted', async () => {
    const { t, id } = await stranded(['a', 'b'], `${hostname()}/${deadPid()}/gone`);
    t.cluster.touch('b');
    const restarted = new PruneService(t.deps, { staleExecutionMs: 60_000 });
    expect(await restarted.recover()).toEqual([id]);
    const v = await restarted.view(id, rev3);
    expect(v.preview.status).toBe('void');
    expect(v.preview.statusReason).toMatch(
      /never started and the live state no longer matches: .*changed since the preview/,
    );
    expect(t.cluster.deletes).toEqual([]);
    const voided = (await t.ev.list({ type: ['prune.voided'], limit: 10 })).filter((e) => e.data.previewId === id);
    expect(voided).toEqual([
      expect.objectContaining({ actor: 'console', data: expect.objectContaining({ recovered: true }) }),
    ]);
  });

  it('approved by another replica just now: left to it; once stale, taken over', async () => {
    const { t, id } = await stranded(['a', 'b'], 'another-host/1234/x');
    expect(await new PruneService(t.deps, { staleExecutionMs: 60_000 }).recover()).toEqual([]);
    expect((await t.deps.store.get(id))?.status).toBe('approved');
    const later = new PruneService(t.deps, { staleExecutionMs: 0 });
    expect(await later.recover()).toEqual([id]);
    await later.settled();
    expect((await t.deps.store.get(id))?.status).toBe('done');
  });
});
