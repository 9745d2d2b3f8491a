// The evidence store on both backends: append, chain, append-only guard, and
// verify() finding an edited row, a deleted row and a truncated tail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceInput } from '../../src/domain/evidence.ts';
import type { EvidenceStore } from '../../src/server/evidence/store.ts';
import { PostgresEvidenceStore } from '../../src/server/evidence/postgres-store.ts';
import { SqliteEvidenceStore } from '../../src/server/evidence/sqlite-store.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';

const ev = (i: number): EvidenceInput => ({
  time: new Date(Date.UTC(2026, 10, 30, 12, 0, i)).toISOString(),
  type: 'app.revision-observed',
  actor: 'kustomize-controller',
  app: `nonprod/flux-system/kustomization/app-${i % 3}`,
  cluster: 'nonprod',
  env: 'dev',
  data: { revision: `main@sha1:${i.toString(16).padStart(40, '0')}`, n: i },
});

interface Backend {
  name: string;
  open(): Promise<EvidenceStore>;
  exec(sql: string): Promise<void>;
  cleanup(): Promise<void>;
}

let pgServer: PgServer | undefined;
const sqliteDir = mkdtempSync(join(tmpdir(), 'evidence-sqlite-'));
let dbCounter = 0;
const pools: pg.Pool[] = [];
const stores: PostgresEvidenceStore[] = [];

const backends: Backend[] = [
  (() => {
    let file = '';
    let store: SqliteEvidenceStore | undefined;
    return {
      name: 'sqlite',
      async open() {
        file = `ev-${++dbCounter}.sqlite`;
        store = SqliteEvidenceStore.open(sqliteDir, file);
        return store;
      },
      async exec(sql: string) {
        store?.db.exec(sql);
      },
      async cleanup() {},
    };
  })(),
  (() => {
    let pool: pg.Pool | undefined;
    let dbUrl = '';
    return {
      name: 'postgres',
      async open() {
        if (!pgServer) pgServer = await startPostgres();
        const admin = new pg.Client({ connectionString: pgServer.url });
        await admin.connect();
        const db = `evidence_${++dbCounter}`;
        await admin.query(`CREATE DATABASE ${db}`);
        await admin.end();
        dbUrl = pgServer.url.replace(/\/postgres$/, `/${db}`);
        pool = new pg.Pool({ connectionString: dbUrl });
        pool.on('error', () => undefined);
        pools.push(pool);
        const s = await PostgresEvidenceStore.open(dbUrl);
        stores.push(s);
        return s;
      },
      async exec(sql: string) {
        await pool?.query(sql);
      },
      async cleanup() {
        await Promise.all(pools.map((p) => p.end()));
        await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
      },
    };
  })(),
];

afterAll(async () => {
  await pgServer?.stop();
  rmSync(sqliteDir, { recursive: true, force: true });
});

describe.each(backends)('evidence store on $name', (b) => {
  let store: EvidenceStore;
  beforeAll(async () => {
    store = await b.open();
    for (let i = 1; i <= 10; i++) await store.append(ev(i));
  });
  afterAll(async () => {
    await store.close();
    await b.cleanup();
  });

  it('chains events and verifies an intact chain', async () => {
    const last = (await store.list({ limit: 1 }))[0];
    expect(last?.seq).toBe(10);
    const all = (await store.list({ limit: 100 })).reverse();
    for (let i = 1; i < all.length; i++) expect(all[i]?.prevHash).toBe(all[i - 1]?.hash);
    expect(await store.verify()).toEqual({ ok: true, count: 10, head: last?.hash });
  });

  it('filters by app and reports the latest revision per app', async () => {
    const forApp = await store.list({ app: 'nonprod/flux-system/kustomization/app-1' });
    expect(forApp.map((e) => e.seq)).toEqual([10, 7, 4, 1]);
    const latest = await store.latestDataByApp('app.revision-observed', 'revision');
    expect(latest.get('nonprod/flux-system/kustomization/app-1')).toBe(
      `main@sha1:${(10).toString(16).padStart(40, '0')}`,
    );
  });

  it('refuses UPDATE and DELETE (append-only guard)', async () => {
    await expect(b.exec(`UPDATE evidence SET actor = 'mallory' WHERE seq = 2`)).rejects.toThrow(/append-only/);
    await expect(b.exec(`DELETE FROM evidence WHERE seq = 2`)).rejects.toThrow(/append-only/);
    expect((await store.verify()).ok).toBe(true);
  });

  it('serializes concurrent appends into one chain', async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(ev(100 + i))));
    const v = await store.verify();
    expect(v).toMatchObject({ ok: true, count: 30 });
  });

  it('detects an edited row, a deleted row and a truncated tail', async () => {
    // an attacker with database access removes the guard first
    if (b.name === 'sqlite') {
      await b.exec('DROP TRIGGER evidence_no_update');
      await b.exec('DROP TRIGGER evidence_no_delete');
    } else {
      await b.exec('DROP TRIGGER evidence_no_change ON evidence');
    }
    await b.exec(`UPDATE evidence SET data = '{"revision":"main@sha1:forged","n":5}' WHERE seq = 5`);
    expect(await store.verify()).toMatchObject({
      ok: false,
      brokenAt: 5,
      reason: expect.stringMatching(/does not match its hash/),
    });

    // a forged row that also fixes its own hash is caught at the next link
    const forged = (await store.list({ afterSeq: 4, beforeSeq: 6 }))[0];
    expect(forged).toBeDefined();
    const { chainText } = await import('../../src/domain/evidence.ts');
    const { sha256 } = await import('../../src/server/evidence/store.ts');
    const rehashed = sha256(chainText({ ...forged!, hash: undefined } as never));
    await b.exec(`UPDATE evidence SET hash = '${rehashed}' WHERE seq = 5`);
    expect(await store.verify()).toMatchObject({
      ok: false,
      brokenAt: 6,
      reason: expect.stringMatching(/does not link/),
    });

    await b.exec(`DELETE FROM evidence WHERE seq IN (5, 6)`);
    expect(await store.verify()).toMatchObject({ ok: false, brokenAt: 5, reason: expect.stringMatching(/missing/) });
  });

  it('detects removal of the newest events', async () => {
    const fresh = await b.open();
    for (let i = 1; i <= 4; i++) await fresh.append(ev(i));
    if (b.name === 'sqlite') await b.exec('DROP TRIGGER evidence_no_delete');
    else await b.exec('DROP TRIGGER evidence_no_change ON evidence');
    await b.exec('DELETE FROM evidence WHERE seq = 4');
    expect(await fresh.verify()).toMatchObject({ ok: false, reason: expect.stringMatching(/removed from the end/) });
    await fresh.close();
  });
});
