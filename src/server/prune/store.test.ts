// The prune store on both backends: previews, one decision per identity, approval thresholds, and exactly
// one execution claim across concurrent claimants (two connections = two BFF replicas).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EvidenceStore } from '../evidence/store.ts';
import { PostgresEvidenceStore } from '../evidence/postgres-store.ts';
import { HOLD_MS, PruneStore, type Decision } from './store.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { startPostgres, type PgServer } from '../../../test/support/postgres.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-store-'));
let pgServer: PgServer | undefined;
const opened: EvidenceStore[] = [];

const backends: Array<{ name: string; open(): Promise<[EvidenceStore, EvidenceStore]> }> = [
  {
    name: 'sqlite',
    async open() {
      const a = SqliteEvidenceStore.open(dir, 'p.sqlite');
      const b = SqliteEvidenceStore.open(dir, 'p.sqlite');
      opened.push(a, b);
      return [a, b];
    },
  },
  {
    name: 'postgres',
    async open() {
      if (!pgServer) throw new Error('no PostgreSQL');
      const a = await PostgresEvidenceStore.open(pgServer.url);
      const b = await PostgresEvidenceStore.open(pgServer.url);
      opened.push(a, b);
      return [a, b];
    },
  },
];

beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const s of opened) await s.close();
  await pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const alice = { issuer: 'console:local', subject: 'alice', name: 'alice', person: 'console:local#alice' };
const decision = (who: string, d: Decision['decision'] = 'approve', issuer = 'console'): Decision => ({
  issuer,
  subject: who,
  name: who,
  decision: d,
  comment: `${d} by ${who}`,
  time: new Date().toISOString(),
});

/** an identity of a person (SSO issuer; `person` links identities) */
const person = (name: string, p: string) => ({ issuer: 'https://idp', subject: name, name, person: p });
const said = { decision: 'approve' as const, comment: 'ok', time: new Date().toISOString() };

let n = 0;
async function preview(s: PruneStore<{ n: number }>, required = 1): Promise<string> {
  const id = `pp-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  const now = new Date().toISOString();
  await s.create({
    id,
    app: 'nonprod/flux-system/kustomization/app',
    cluster: 'nonprod',
    env: 'dev',
    status: 'pending',
    statusReason: null,
    snapshotHash: 'h',
    requiredApprovals: required,
    requester: alice,
    createdAt: now,
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    doc: { n },
  });
  return id;
}

for (const b of backends)
  describe(`prune store (${b.name})`, () => {
    it('stores a preview, one decision per identity, and approves at the threshold', async () => {
      const [ev] = await b.open();
      const s = new PruneStore<{ n: number }>(ev);
      const id = await preview(s, 2);
      const got = await s.get(id);
      expect(got).toMatchObject({ status: 'pending', requester: alice, requiredApprovals: 2, decisions: [] });
      expect(typeof got?.doc.n).toBe('number');
      const first = await s.decide(id, decision('bob'));
      expect(first).toMatchObject({ ok: true, decided: false, preview: { status: 'pending' } });
      expect(await s.decide(id, decision('bob'))).toEqual({ ok: false, reason: 'already-decided' });
      const second = await s.decide(id, decision('carol'));
      expect(second).toMatchObject({ ok: true, decided: true, preview: { status: 'approved' } });
      if (second.ok) expect(second.preview.decisions.map((d) => d.name)).toEqual(['bob', 'carol']);
      expect(await s.decide(id, decision('dave'))).toEqual({ ok: false, reason: 'not-pending', status: 'approved' });
      expect((await s.list('approved')).some((p) => p.id === id)).toBe(true);
      expect((await s.list('pending')).some((p) => p.id === id)).toBe(false);
      expect(await s.decide('nope', decision('bob'))).toEqual({ ok: false, reason: 'not-found' });
    });

    it('one decision per person, checked in the transaction that records it: another identity of the same person is refused', async () => {
      const [e1, e2] = await b.open();
      const s1 = new PruneStore<{ n: number }>(e1);
      const s2 = new PruneStore<{ n: number }>(e2);
      const id = await preview(s1, 3);
      // the requester's SSO identity, linked to the same person, neither approves nor rejects
      expect(await s1.decide(id, { ...person('alice-sso', 'console:local#alice'), ...said })).toEqual({
        ok: false,
        reason: 'requester',
      });
      expect(await s1.decide(id, { ...person('bob', 'p-bob'), ...said })).toMatchObject({ ok: true });
      expect(await s2.decide(id, { ...person('bob-sso', 'p-bob'), ...said, decision: 'reject' })).toEqual({
        ok: false,
        reason: 'already-decided',
      });
      // two identities of one person at once, from two replicas: one decision
      const both = await Promise.all([
        s1.decide(id, { ...person('carol', 'p-carol'), ...said }),
        s2.decide(id, { ...person('carol-sso', 'p-carol'), ...said }),
      ]);
      expect(both.map((r) => (r.ok ? 'ok' : r.reason)).sort()).toEqual(['already-decided', 'ok']);
      const got = await s1.get(id);
      expect(got?.decisions.map((d) => d.person)).toEqual(['p-bob', 'p-carol']);
      expect(got?.status).toBe('pending');
    });

    it('holds: of twelve concurrent approvers on two replicas exactly the approvals needed pass; a person holds once', async () => {
      const [e1, e2] = await b.open();
      const s1 = new PruneStore<{ n: number }>(e1);
      const s2 = new PruneStore<{ n: number }>(e2);
      const id = await preview(s1, 2);
      const holds = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 ? s1 : s2).hold(id, { ...person(`r${i}`, `p-r${i}`), decision: 'approve' }),
        ),
      );
      expect(holds.filter((h) => h.ok)).toHaveLength(2);
      expect(holds.filter((h) => !h.ok).map((h) => (h.ok ? '' : h.reason))).toEqual(Array(10).fill('enough-approvals'));
      const winners = holds.flatMap((h, i) => (h.ok ? [i] : []));
      const [w0, w1] = winners as [number, number];
      // the same person again (another identity): being decided
      expect(await s2.hold(id, { ...person(`r${w0}-sso`, `p-r${w0}`), decision: 'reject' })).toEqual({
        ok: false,
        reason: 'deciding',
      });
      // a hold whose intent could not be recorded is released: its room goes to the next approver
      await s1.release(id, `p-r${w1}`);
      expect(await s2.hold(id, { ...person('late', 'p-late'), decision: 'approve' })).toEqual({ ok: true });
      expect((await s1.decide(id, { ...person(`r${w0}`, `p-r${w0}`), ...said }, 'host/1/a')).ok).toBe(true);
      const last = await s2.decide(id, { ...person('late', 'p-late'), ...said }, 'host/2/b');
      // the approval that completes it names the process that is to claim the execution
      expect(last).toMatchObject({ ok: true, decided: true, preview: { status: 'approved', executor: 'host/2/b' } });
    });

    it('a hold left by a process that died is given up after HOLD_MS', async () => {
      const [ev] = await b.open();
      const s = new PruneStore<{ n: number }>(ev);
      const id = await preview(s, 1);
      expect(await s.hold(id, { ...person('dead', 'p-dead'), decision: 'approve' })).toEqual({ ok: true });
      expect(await s.hold(id, { ...person('next', 'p-next'), decision: 'approve' })).toMatchObject({
        ok: false,
        reason: 'enough-approvals',
      });
      const later = Date.now() + HOLD_MS + 1000;
      const clock = vi.spyOn(Date, 'now').mockReturnValue(later);
      try {
        expect(await s.hold(id, { ...person('next', 'p-next'), decision: 'approve' })).toEqual({ ok: true });
      } finally {
        clock.mockRestore();
      }
    });

    it('a rejection rejects', async () => {
      const [ev] = await b.open();
      const s = new PruneStore<{ n: number }>(ev);
      const id = await preview(s, 2);
      expect(await s.decide(id, decision('bob', 'reject'))).toMatchObject({
        ok: true,
        preview: { status: 'rejected' },
      });
    });

    it('concurrent approvals and claims from two replicas: one execution', async () => {
      const [e1, e2] = await b.open();
      const s1 = new PruneStore<{ n: number }>(e1);
      const s2 = new PruneStore<{ n: number }>(e2);
      const id = await preview(s1, 1);
      const decided = await Promise.all([s1.decide(id, decision('bob')), s2.decide(id, decision('carol'))]);
      expect(decided.filter((d) => d.ok && d.decided)).toHaveLength(1);
      const entries = [{ batch: 0, object: 'cm/a', uid: 'u1', resourceVersion: '1' }];
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? s1 : s2).claim(id, `replica-${i}`, entries, new Date().toISOString()),
        ),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect((await s1.get(id))?.status).toBe('executing');
      const j = await s2.journal(id);
      expect(j).toEqual([expect.objectContaining({ position: 0, object: 'cm/a', uid: 'u1', state: 'planned' })]);
      const now = new Date().toISOString();
      expect(await s1.mark(id, 0, ['planned'], 'deleting', null, now)).toBe(true);
      expect(await s2.mark(id, 0, ['planned'], 'deleting', null, now)).toBe(false);
      expect(await s2.mark(id, 0, ['deleting'], 'deleted', '200', now)).toBe(true);
      expect(await s1.transition(id, ['executing'], 'done', null, now)).toBe(true);
      expect(await s2.transition(id, ['executing'], 'failed', 'x', now)).toBe(false);
    });
  });
