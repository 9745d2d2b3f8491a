// Approving a prune: a changed object voids the approval, an override needs two approvers and the typed
// confirmation, "not the same person" compares people, and a refused attempt records no intent. Against the in-memory cluster of test-fixture.ts and a real SQLite evidence store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { Principal } from '../auth/index.ts';
import { HttpError } from '../http/errors.ts';
import { dev, rev1, rev2, rev3, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PruneService approvals', () => {
  it('the store gone right after a recorded approval: the answer is the decision, and the execution starts once it is back', async () => {
    const t = setup(dir, { inGit: ['keep', 'b', 'c', 'd'], live: ['keep', 'a', 'b', 'c', 'd'] });
    const { preview } = await t.service.create(t.app, dev);
    const store = t.deps.store;
    const decide = store.decide.bind(store);
    const get = store.get.bind(store);
    let down = false;
    // the database stops just after the decision is written (the act), before the execution's first read
    store.decide = async (...args: Parameters<typeof store.decide>) => {
      const r = await decide(...args);
      down = true;
      return r;
    };
    store.get = async (id: string) => {
      if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return get(id);
    };
    const v = await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied);
    expect(v.preview.status).toBe('approved');
    expect(t.cluster.deletes).toEqual([]);
    down = false;
    await vi.waitFor(() => expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a']), {
      timeout: 5000,
      interval: 50,
    });
    await t.service.settled();
    expect((await t.service.view(preview.id, rev1)).preview.status).toBe('done');
  });

  it('the claim committed but its answer lost: the retry finds it is its own and runs it; the answer is the decision', async () => {
    const t = setup(dir, { inGit: ['keep', 'b', 'c', 'd'], live: ['keep', 'a', 'b', 'c', 'd'] });
    const { preview } = await t.service.create(t.app, dev);
    const store = t.deps.store;
    const claim = store.claim.bind(store);
    const get = store.get.bind(store);
    let lost = false;
    let claims = 0;
    const gone = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    // the first claim's transaction commits; the connection drops before its answer, and the reads fail a while
    store.claim = async (...args: Parameters<typeof store.claim>) => {
      const r = await claim(...args);
      if (++claims > 1) return r;
      lost = true;
      throw gone();
    };
    store.get = async (id: string) => {
      if (lost) throw gone();
      return get(id);
    };
    const v = await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied);
    expect(v.preview.status).toBe('approved');
    lost = false;
    await vi.waitFor(() => expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a']), {
      timeout: 5000,
      interval: 50,
    });
    await t.service.settled();
    expect((await t.service.view(preview.id, rev1)).preview.status).toBe('done');
  });

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

/** a reviewer of prod, signed in as an identity of a person */
const reviewer = (name: string, more: Partial<Principal> = {}): Principal => ({
  name,
  source: 'local',
  issuer: 'console:local',
  subject: `id-${name}`,
  person: `console:local#id-${name}`,
  groups: [],
  grants: [parseGrant('reviewer@prod/prod')],
  ...more,
});

async function evidenceOf(t: ReturnType<typeof setup>, previewId: string) {
  const all = await t.ev.list({ limit: 1000, order: 'asc' });
  const of = all.filter((e) => e.data.previewId === previewId);
  return {
    approved: of.filter((e) => e.type === 'prune.approved'),
    refused: of.filter((e) => e.type === 'action.refused'),
    failed: of.filter((e) => e.type === 'action.failed'),
    completed: of.filter((e) => e.type === 'action.completed'),
  };
}

describe('intent only for what may happen', () => {
  it('a repeated approval by the same reviewer adds no prune.approved: one action.refused naming why', async () => {
    const t = setup(dir, { inGit: [], live: ['a', 'b'] });
    const { preview } = await t.service.create(t.app, dev);
    const confirmation = preview.doc.confirmation ?? '';
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok', confirmation }, t.onDenied);
    for (const decision of ['approve', 'reject'] as const)
      await expect(
        t.service.decide(preview.id, rev1, { decision, comment: 'again', confirmation }, t.onDenied),
      ).rejects.toMatchObject({ status: 409, message: 'you already decided on this prune' });
    const ev = await evidenceOf(t, preview.id);
    expect(ev.approved).toHaveLength(1);
    expect(ev.failed).toEqual([]);
    expect(ev.refused.map((e) => [e.actor, e.data.action, e.data.reason])).toEqual([
      ['rev1', 'prune.approved', 'you already decided on this prune'],
      ['rev1', 'prune.rejected', 'you already decided on this prune'],
    ]);
    expect(ev.refused[0]?.data.who).toMatchObject({
      issuer: 'console:local',
      subject: 'rev1',
      person: 'console:local#rev1',
    });
    // the same refusal again within a minute is counted, not appended again
    await expect(
      t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'again', confirmation }, t.onDenied),
    ).rejects.toMatchObject({ status: 409 });
    expect((await evidenceOf(t, preview.id)).refused).toHaveLength(2);
    expect((await t.service.view(preview.id, rev3)).preview).toMatchObject({
      status: 'pending',
      decisions: [{ name: 'rev1' }],
    });
  });

  it('twelve concurrent approvals by different reviewers: exactly the two needed are recorded, the rest refused', async () => {
    const t = setup(dir, { inGit: [], live: ['a', 'b', 'c'] });
    const { preview } = await t.service.create(t.app, dev);
    const confirmation = preview.doc.confirmation ?? '';
    const answers = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        t.service.decide(
          preview.id,
          reviewer(`r${i}`),
          { decision: 'approve', comment: 'ok', confirmation },
          t.onDenied,
        ),
      ),
    );
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(2);
    for (const a of answers) if (a.status === 'rejected') expect(a.reason).toMatchObject({ status: 409 });
    await t.service.settled();
    const ev = await evidenceOf(t, preview.id);
    expect(ev.approved).toHaveLength(2);
    expect(ev.completed.filter((e) => e.data.action === 'prune.approved')).toHaveLength(2);
    expect(ev.failed).toEqual([]);
    expect(ev.refused).toHaveLength(10);
    expect((await t.service.view(preview.id, rev3)).preview.status).toBe('done');
    expect(t.cluster.objects.size).toBe(0);
  });

  it('local alice and her linked SSO identity cannot give both approvals, one after the other or at once', async () => {
    const person = 'console:local#id-alice';
    const alice = reviewer('alice');
    const ssoAlice = reviewer('oidc:alice', { source: 'oidc', issuer: 'https://idp', subject: 'alice', person });
    for (const atOnce of [false, true]) {
      const t = setup(dir, { inGit: [], live: ['a', 'b'] });
      const { preview } = await t.service.create(t.app, dev);
      const confirmation = preview.doc.confirmation ?? '';
      const approve = (who: Principal) =>
        t.service.decide(preview.id, who, { decision: 'approve', comment: 'ok', confirmation }, t.onDenied);
      const answers = atOnce
        ? await Promise.allSettled([approve(alice), approve(ssoAlice)])
        : [...(await Promise.allSettled([approve(alice)])), ...(await Promise.allSettled([approve(ssoAlice)]))];
      expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
      const v = await t.service.view(preview.id, rev3);
      expect(v.preview.status).toBe('pending');
      expect(v.preview.decisions).toHaveLength(1);
      expect(v.preview.decisions[0]?.person).toBe(person);
      const ev = await evidenceOf(t, preview.id);
      expect(ev.approved).toHaveLength(1);
      expect(ev.refused).toHaveLength(1);
      expect(ev.approved[0]?.data.approver).toMatchObject({ person });
      expect(t.cluster.deletes).toEqual([]);
    }
  });

  it('the requester linked to another identity cannot approve through it (403, access.denied)', async () => {
    const t = setup(dir, { inGit: ['keep', 'b', 'c', 'd', 'e'], live: ['keep', 'a', 'b', 'c', 'd', 'e'] });
    const requester = reviewer('erin');
    const { preview } = await t.service.create(t.app, requester);
    const sso = reviewer('oidc:erin.e', {
      source: 'oidc',
      issuer: 'https://idp',
      subject: 'e-1',
      person: requester.person,
    });
    await expect(
      t.service.decide(preview.id, sso, { decision: 'approve', comment: 'mine' }, t.onDenied),
    ).rejects.toMatchObject({ status: 403 });
    expect(t.denied).toEqual([expect.stringMatching(/requester/)]);
    // an SSO identity that only shares the name is another person
    const other = reviewer('oidc:erin', {
      source: 'oidc',
      issuer: 'https://idp',
      subject: 'erin',
      person: 'https://idp#erin',
    });
    await t.service.decide(preview.id, other, { decision: 'approve', comment: 'ok' }, t.onDenied);
    await t.service.settled();
    expect((await t.service.view(preview.id, rev3)).preview.status).toBe('done');
  });

  it('an approval whose intent cannot be recorded is refused with 503 and holds nothing', async () => {
    const t = setup(dir, { inGit: ['keep', 'b', 'c', 'd', 'e'], live: ['keep', 'a', 'b', 'c', 'd', 'e'] });
    const { preview } = await t.service.create(t.app, dev);
    const intent = vi
      .spyOn(t.deps.recorder, 'intent')
      .mockRejectedValueOnce(new HttpError(503, 'EvidenceUnavailable', 'the evidence store cannot record this'));
    await expect(
      t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied),
    ).rejects.toMatchObject({ status: 503 });
    intent.mockRestore();
    expect((await t.service.view(preview.id, rev3)).preview).toMatchObject({ status: 'pending', decisions: [] });
    // the hold went with it: the same reviewer approves now
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied);
    await t.service.settled();
    expect((await t.service.view(preview.id, rev3)).preview.status).toBe('done');
  });

  it('a decision on a preview that is not pending or expired is refused before any intent', async () => {
    const t = setup(dir, { inGit: ['keep', 'b', 'c', 'd', 'e'], live: ['keep', 'a', 'b', 'c', 'd', 'e'] });
    const { preview } = await t.service.create(t.app, dev);
    await t.service.decide(preview.id, rev1, { decision: 'reject', comment: 'no' }, t.onDenied);
    await expect(
      t.service.decide(preview.id, rev2, { decision: 'approve', comment: 'ok' }, t.onDenied),
    ).rejects.toMatchObject({ status: 409, message: 'this prune is rejected' });
    const ev = await evidenceOf(t, preview.id);
    expect(ev.approved).toEqual([]);
    expect(ev.refused.map((e) => [e.actor, e.data.reason])).toEqual([['rev2', 'this prune is rejected']]);
  });
});

describe("a newer source revision (in a monorepo, anyone else's commit)", () => {
  /** the app's source moves to `sha`; its render there has `inGit` (or fails) */
  function moveTo(t: ReturnType<typeof setup>, sha: string, inGit: string[] | Error) {
    t.app.source.revisionWanted = `main@sha1:${sha}`;
    t.deps.render = async () => {
      if (inGit instanceof Error) throw inGit;
      return {
        objects: inGit.map((n) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: 'prod' } })),
        renderer: 'test',
        revision: `main@sha1:${sha}`,
        renderHash: `h${sha}`,
      };
    };
  }
  /** eight objects that stay: one candidate is within the 25 % limit (no override) */
  const KEPT = Array.from({ length: 8 }, (_, i) => `k${i}`);
  const approve = (t: ReturnType<typeof setup>, id: string) =>
    t.service.decide(id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied);

  it('leaves the approval standing when the render there leaves the same candidates; the record says so', async () => {
    const t = setup(dir, { inGit: KEPT, live: [...KEPT, 'a'] });
    const { preview } = await t.service.create(t.app, dev);
    expect(preview.doc.planState).toBe('ready');
    moveTo(t, '2', KEPT);
    expect((await approve(t, preview.id)).preview.status).not.toBe('void');
    await t.service.settled();
    expect((await t.service.view(preview.id, rev2)).preview.status).toBe('done');
    expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a']);
    const ev = await evidenceOf(t, preview.id);
    expect(ev.approved).toHaveLength(1);
    expect(ev.approved[0]?.data.recheckedAt).toEqual({ revision: 'main@sha1:2', renderHash: 'h2' });
  });

  it("an approval at the preview's own revision carries no re-check", async () => {
    const t = setup(dir, { inGit: KEPT, live: [...KEPT, 'a'] });
    const { preview } = await t.service.create(t.app, dev);
    await approve(t, preview.id);
    expect((await evidenceOf(t, preview.id)).approved[0]?.data).not.toHaveProperty('recheckedAt');
  });

  it.each([
    ['a candidate is in the render again', [...KEPT, 'a'], /a in the render again/],
    ['another object is newly out of the render', KEPT.slice(1), /k0 newly out of it/],
    ['the render there fails', new Error('kustomize: accumulating resources'), /rendering it failed: kustomize/],
  ] as const)('voids the approval when %s: nothing is deleted', async (_what, inGit, reason) => {
    const t = setup(dir, { inGit: KEPT, live: [...KEPT, 'a'] });
    const { preview } = await t.service.create(t.app, dev);
    moveTo(t, '3', inGit instanceof Error ? inGit : [...inGit]);
    await expect(approve(t, preview.id)).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/^approval void: the app's source moved to main@sha1:3 since the preview/),
    });
    const view = (await t.service.view(preview.id, rev2)).preview;
    expect(view.status).toBe('void');
    expect(view.statusReason).toMatch(reason);
    expect(t.cluster.deletes).toEqual([]);
    expect((await evidenceOf(t, preview.id)).approved).toEqual([]);
  });
});
