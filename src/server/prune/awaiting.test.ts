// The previews waiting for one user's decision (GET /api/prune-previews?awaiting=me, the header's count): exactly
// those the approve route would let them approve now. Against the in-memory cluster of test-fixture.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { Principal } from '../auth/index.ts';
import type { ReaderAccess } from './approvals.ts';
import { dev, rev1, rev2, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-awaiting-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const who = (name: string, ...grants: string[]): Principal => ({
  name,
  source: 'local',
  groups: [],
  grants: grants.map(parseGrant),
});
const ids = async (t: ReturnType<typeof setup>, user: Principal, access?: ReaderAccess) =>
  (await t.service.awaiting(user, access)).map((p) => p.id);

describe('previews awaiting a decision', () => {
  it('a reviewer of the place, never the requester, not decided yet, pending and not expired', async () => {
    const t = setup(dir, { inGit: [], live: ['a', 'b'] });
    // an empty render: needs two approvers, so one approval leaves it pending
    const { preview } = await t.service.create(t.app, dev);
    const mine = (await t.service.create(t.app, rev1)).preview;
    expect(await ids(t, rev1)).toEqual([preview.id]);
    expect((await ids(t, rev2)).sort()).toEqual([preview.id, mine.id].sort());
    // not a reviewer there, or only elsewhere
    expect(await ids(t, dev)).toEqual([]);
    expect(await ids(t, who('elsewhere', 'reviewer@nonprod/dev'))).toEqual([]);
    expect(await ids(t, who('root', 'admin'))).toHaveLength(2);
    // one approval of two: not awaiting the one who gave it any more, still awaiting the others
    const confirmation = preview.doc.confirmation ?? '';
    await t.service.decide(preview.id, rev2, { decision: 'approve', comment: 'ok', confirmation }, t.onDenied);
    expect(await ids(t, rev2)).toEqual([mine.id]);
    expect(await ids(t, rev1)).toEqual([preview.id]);
    // a rejected one waits for nobody
    await t.service.decide(preview.id, rev1, { decision: 'reject', comment: 'no' }, t.onDenied);
    expect(await ids(t, rev1)).toEqual([]);
    expect(await ids(t, rev2)).toEqual([mine.id]);
  });

  it('in impersonation mode, only what the reviewer can see all of', async () => {
    const t = setup(dir, { inGit: ['keep', 'b', 'c', 'd', 'e'], live: ['keep', 'a', 'b', 'c', 'd', 'e'] });
    const { preview } = await t.service.create(t.app, dev);
    const all: ReaderAccess = async (items) => ({ visible: [...items], hidden: [], message: null });
    const none: ReaderAccess = async (items) => ({
      visible: [],
      hidden: [...items],
      message: `${items.length} hidden: no get on configmaps`,
    });
    expect(await ids(t, rev1, all)).toEqual([preview.id]);
    expect(await ids(t, rev1, none)).toEqual([]);
  });
});
