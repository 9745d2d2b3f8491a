// The prune service end to end against an in-memory cluster (ConfigMaps only) and a real SQLite evidence store:
// plan, who may approve, exactly one execution of concurrent approvals, DELETE preconditions, evidence.
// Each step's own cases sit beside its module (plan-service, approvals, executor, recovery .test.ts); the same
// paths run against the real sandbox in test/integration/prune.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dev, rev1, rev2, rev3, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PruneService', () => {
  it('plans, refuses the requester and non-reviewers, approves once, deletes with preconditions, records evidence', async () => {
    // 3 of 13: under the 25% default limit
    const t = setup(dir, {
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
});
