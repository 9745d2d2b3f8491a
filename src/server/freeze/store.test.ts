// A freeze's details written at once by two writers, on both backends (two connections = two BFF replicas):
// the store's compare-and-set keeps both (an extension and an out-of-band record), and through the service an
// extension whose intent is slow to record and an interference observed meanwhile (or the other way round)
// both stay in the freeze. A writer that keeps losing gives up with a clear 409.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appOf, FakeFlux, noLiveChanges, oncall, replicaOf } from '../../../test/support/freeze-fakes.ts';
import { startPostgres, type PgServer } from '../../../test/support/postgres.ts';
import type { App } from '../../domain/app.ts';
import { FREEZE_ANNOTATIONS } from '../../domain/freeze.ts';
import { PostgresEvidenceStore } from '../evidence/postgres-store.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { FreezeStore, type FreezeRow } from './store.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-store-'));
let pgServer: PgServer | undefined;
const opened: EvidenceStore[] = [];

const backends: Array<{ name: string; open(): Promise<[EvidenceStore, EvidenceStore]> }> = [
  {
    name: 'sqlite',
    async open() {
      const file = `f-${Math.random().toString(36).slice(2)}.sqlite`;
      const a = SqliteEvidenceStore.open(dir, file);
      const b = SqliteEvidenceStore.open(dir, file);
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

type Obj = Record<string, unknown>;

const app = (name: string) => appOf(name, {}, 'dev');

let n = 0;
async function freeze(s: FreezeStore, apps: string[]): Promise<string> {
  const id = `frz-${(++n).toString(16).padStart(8, '0')}`;
  const now = new Date().toISOString();
  const r = await s.create({
    id,
    cluster: 'c',
    env: 'dev',
    app: null,
    status: 'active',
    reason: 'incident',
    incident: null,
    createdBy: 'oncall',
    createdAt: now,
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
    doc: {
      targets: apps.map((a) => ({
        appId: `${id}/${a}`,
        kind: 'Kustomization',
        namespace: 'flux-system',
        name: a,
        controller: 'flux',
        env: 'dev',
        prior: { controller: 'flux', suspend: false, annotations: {} },
        applied: true,
      })),
      extensions: [],
      startedAt: now,
    },
  });
  expect(r.ok).toBe(true);
  return id;
}

const extension = (by: string, to: string) => (row: FreezeRow) => ({
  doc: {
    ...row.doc,
    extensions: [...row.doc.extensions, { at: to, by, reason: 'longer', from: row.expiresAt, to }],
  },
  expiresAt: to,
});
const interference = (app: string, state: string) => (row: FreezeRow) => {
  const t = row.doc.targets.find((x) => x.name === app);
  if (!t) return undefined;
  t.interference = { state, at: new Date().toISOString(), message: state };
  return { doc: row.doc };
};

for (const b of backends)
  describe(`freeze details (${b.name})`, () => {
    let s1: FreezeStore;
    let s2: FreezeStore;
    let raw: EvidenceStore;
    beforeAll(async () => {
      const [x, y] = await b.open();
      raw = x;
      s1 = new FreezeStore(x);
      s2 = new FreezeStore(y);
    });

    it('an extension and an interference record written at once by two replicas both stay', async () => {
      const id = await freeze(s1, ['a', 'b']);
      const to = new Date(Date.now() + 3_600_000).toISOString();
      const [e, i] = await Promise.all([
        s1.modify(id, 'active', extension('alice', to)),
        s2.modify(id, 'active', interference('a', 'resumed-directly')),
      ]);
      expect(e?.changed).toBe(true);
      expect(i?.changed).toBe(true);
      const row = (await s1.get(id)) as FreezeRow;
      expect(row.doc.extensions.map((x) => x.by)).toEqual(['alice']);
      expect(row.expiresAt).toBe(to);
      expect(row.doc.targets.find((t) => t.name === 'a')?.interference?.state).toBe('resumed-directly');
      expect(row.version).toBe(2);
    });

    it('many writers at once on two connections: every change stays, the version counts each write', async () => {
      const names = Array.from({ length: 8 }, (_, i) => `app${i}`);
      const id = await freeze(s1, names);
      const v0 = ((await s1.get(id)) as FreezeRow).version;
      const writes = names.flatMap((a, i) => [
        (i % 2 ? s1 : s2).modify(id, 'active', interference(a, 'annotation-dropped')),
        (i % 2 ? s2 : s1).modify(
          id,
          'active',
          extension(`u${i}`, new Date(Date.now() + 60_000 * (i + 20)).toISOString()),
        ),
      ]);
      const done = await Promise.all(writes);
      expect(done.every((d) => d?.changed)).toBe(true);
      const row = (await s2.get(id)) as FreezeRow;
      expect(row.doc.extensions.map((x) => x.by).sort()).toEqual(names.map((_, i) => `u${i}`).sort());
      expect(row.doc.targets.every((t) => t.interference?.state === 'annotation-dropped')).toBe(true);
      expect(row.version).toBe(v0 + writes.length);
      // each extension's `from` is the expiry it replaced: the history is one chain
      const chain = [...row.doc.extensions];
      for (let k = 1; k < chain.length; k++) expect(chain[k]?.from).toBe(chain[k - 1]?.to);
    });

    it('a freeze no longer in the expected status is not written; "nothing to change" writes nothing', async () => {
      const id = await freeze(s1, ['a']);
      const v0 = ((await s1.get(id)) as FreezeRow).version;
      expect(await s1.modify(id, 'active', () => undefined)).toMatchObject({ changed: false });
      expect(((await s1.get(id)) as FreezeRow).version).toBe(v0);
      expect(await s1.transition(id, 'active', 'ending')).toBe(true);
      let called = 0;
      const r = await s2.modify(id, 'active', (row) => {
        called++;
        return extension('late', new Date().toISOString())(row);
      });
      expect(r).toBeUndefined();
      expect(called).toBe(0);
      expect(((await s1.get(id)) as FreezeRow).doc.extensions).toEqual([]);
      expect(await s1.modify('frz-ffffffff', 'active', () => undefined)).toBeUndefined();
    });

    it('a whole-doc update with the version it read fails once the row was written since', async () => {
      const id = await freeze(s1, ['a']);
      const read = (await s1.get(id)) as FreezeRow;
      await s2.modify(id, 'active', interference('a', 'resumed-directly'));
      expect(await s1.update(id, 'active', { doc: read.doc, version: read.version })).toBe(false);
      expect(((await s1.get(id)) as FreezeRow).doc.targets[0]?.interference?.state).toBe('resumed-directly');
      const fresh = (await s1.get(id)) as FreezeRow;
      expect(await s1.update(id, 'active', { doc: fresh.doc, version: fresh.version })).toBe(true);
    });

    if (b.name === 'sqlite')
      it('a write that lands between the read and the compare-and-set is kept: the change runs again on it', async () => {
        const id = await freeze(s1, ['a']);
        const db = (raw as unknown as { db: Database.Database }).db;
        // another writer commits between modify's read and its write (synchronously, inside the change)
        const sneak = () => {
          const row = db.prepare('SELECT doc FROM freezes WHERE id = ?').get(id) as { doc: string };
          const doc = JSON.parse(row.doc) as FreezeRow['doc'];
          doc.extensions.push({ at: 'x', by: 'sneaky', reason: 'r', from: 'f', to: 't' });
          db.prepare('UPDATE freezes SET doc = ?, version = version + 1 WHERE id = ?').run(JSON.stringify(doc), id);
        };
        let calls = 0;
        const r = await s1.modify(id, 'active', (row) => {
          if (calls++ === 0) sneak();
          return interference('a', 'resumed-directly')(row);
        });
        expect(calls).toBe(2);
        expect(r?.changed).toBe(true);
        const row = (await s1.get(id)) as FreezeRow;
        expect(row.doc.extensions.map((e) => e.by)).toEqual(['sneaky']);
        expect(row.doc.targets[0]?.interference?.state).toBe('resumed-directly');
        // a writer that loses every time gives up with a clear conflict, having written nothing of its own
        const before = (await s1.get(id)) as FreezeRow;
        const err = await s1
          .modify(id, 'active', (row) => {
            sneak();
            return extension('loser', 'never')(row);
          })
          .catch((e: unknown) => e);
        expect(err).toMatchObject({ status: 409, message: expect.stringMatching(/being changed by others/) });
        const after = (await s1.get(id)) as FreezeRow;
        expect(after.doc.extensions.some((e) => e.by === 'loser')).toBe(false);
        expect(after.version).toBeGreaterThan(before.version);
      });
  });

// ---- through the service: two replicas, one database, one cluster -------------------------------------------

/** A promise to hold a writer at a chosen point, and the signal that it got there. */
function gate() {
  let open!: () => void;
  let arrived!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (arrived = r));
  return { open, opened, reached, arrived };
}

/** a replica on its own connection to the database (the apps' freezes, no live changes) */
const replica = (name: string, ev: EvidenceStore, flux: FakeFlux, apps: App[]) =>
  replicaOf({ name, ev, flux, apps, diff: noLiveChanges });

for (const b of backends)
  describe(`freeze details through the service, two replicas (${b.name})`, () => {
    it('an extension whose intent is slow to record does not erase an interference recorded meanwhile', async () => {
      const [x, y] = await b.open();
      const flux = new FakeFlux();
      const name = `slow-${++n}`;
      flux.add(name);
      const apps = [app(name)];
      const A = replica('replica-a', x, flux, apps);
      const B = replica('replica-b', y, flux, apps);
      const f = await A.service.create(oncall, { cluster: 'c', app: apps[0]?.id, reason: 'incident', minutes: 10 });
      // replica A's evidence store holds the extension's intent until B has recorded the interference
      const g = gate();
      const append = x.append.bind(x);
      x.append = async (e) => {
        if (e.type === 'freeze.extended') {
          g.arrived();
          await g.opened;
        }
        return append(e);
      };
      const extending = A.service.extend(f.id, oncall, { minutes: 30, reason: 'still investigating' });
      await g.reached;
      // someone resumes the app by hand; replica B sees it
      ((flux.objects.get(name) as Obj).spec as Obj).suspend = false;
      await B.service.observe(apps[0]?.id as string, false);
      expect((await B.store.get(f.id))?.doc.targets[0]?.interference?.state).toBe('resumed-directly');
      g.open();
      const extended = await extending;
      x.append = append;
      const row = (await B.store.get(f.id)) as FreezeRow;
      expect(row.doc.extensions.map((e) => e.reason)).toEqual(['still investigating']);
      expect(row.expiresAt).toBe(extended.expiresAt);
      expect(row.doc.targets[0]?.interference?.state).toBe('resumed-directly');
      expect(((flux.objects.get(name) as Obj).metadata as Obj).annotations).toMatchObject({
        [FREEZE_ANNOTATIONS.until]: extended.expiresAt,
      });
      await A.service.settled();
      await B.service.settled();
    });

    it('an interference read before an extension and written after it does not erase the extension', async () => {
      const [x, y] = await b.open();
      const flux = new FakeFlux();
      const name = `late-${++n}`;
      flux.add(name);
      const apps = [app(name)];
      const A = replica('replica-a', x, flux, apps);
      const B = replica('replica-b', y, flux, apps);
      const f = await A.service.create(oncall, { cluster: 'c', app: apps[0]?.id, reason: 'incident', minutes: 10 });
      // replica B reads the freeze, then stalls (a slow database round trip) before it writes
      const g = gate();
      const get = B.store.get.bind(B.store);
      let first = true;
      B.store.get = async (id) => {
        const row = await get(id);
        if (first) {
          first = false;
          g.arrived();
          await g.opened;
        }
        return row;
      };
      ((flux.objects.get(name) as Obj).spec as Obj).suspend = false;
      const observing = B.service.observe(apps[0]?.id as string, false);
      await g.reached;
      const extended = await A.service.extend(f.id, oncall, { minutes: 30, reason: 'still investigating' });
      g.open();
      await observing;
      const row = (await A.store.get(f.id)) as FreezeRow;
      expect(row.doc.extensions.map((e) => e.reason)).toEqual(['still investigating']);
      expect(row.expiresAt).toBe(extended.expiresAt);
      expect(row.doc.targets[0]?.interference?.state).toBe('resumed-directly');
      // recorded once: a second look at the same state writes nothing and records nothing
      const v = row.version;
      await B.service.observe(apps[0]?.id as string, false);
      expect(((await A.store.get(f.id)) as FreezeRow).version).toBe(v);
      await A.service.settled();
      await B.service.settled();
    });
  });
