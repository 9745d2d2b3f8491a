// The prune store on both backends: previews, one decision per identity, approval thresholds, and exactly
// one execution claim across concurrent claimants (two connections = two BFF replicas).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceStore } from '../evidence/store.ts';
import { PostgresEvidenceStore } from '../evidence/postgres-store.ts';
import { PruneStore, type Decision } from './store.ts';
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

const alice = { issuer: 'console', subject: 'alice', name: 'alice' };
const decision = (who: string, d: Decision['decision'] = 'approve', issuer = 'console'): Decision => ({
  issuer,
  subject: who,
  name: who,
  decision: d,
  comment: `${d} by ${who}`,
  time: new Date().toISOString(),
});

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
      // the same subject from another issuer is another identity at this layer (the service judges persons)
      const second = await s.decide(id, decision('carol'));
      expect(second).toMatchObject({ ok: true, decided: true, preview: { status: 'approved' } });
      if (second.ok) expect(second.preview.decisions.map((d) => d.name)).toEqual(['bob', 'carol']);
      expect(await s.decide(id, decision('dave'))).toEqual({ ok: false, reason: 'not-pending', status: 'approved' });
      expect((await s.list('approved')).some((p) => p.id === id)).toBe(true);
      expect((await s.list('pending')).some((p) => p.id === id)).toBe(false);
      expect(await s.decide('nope', decision('bob'))).toEqual({ ok: false, reason: 'not-found' });
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
