// Approving a prune: a changed object voids the approval, and an override needs two approvers and the typed
// confirmation. Against the in-memory cluster of test-fixture.ts and a real SQLite evidence store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dev, rev1, rev2, rev3, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PruneService approvals', () => {
  it('a changed object voids the approval; nothing is deleted', async () => {
    const t = setup(dir, {
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
    const t = setup(dir, { inGit: [], live: ['a', 'b'] });
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
});
