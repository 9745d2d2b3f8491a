// The evidence list query: filters, text search and keyset paging, built for both dialects and run on SQLite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceInput } from '../../domain/evidence.ts';
import { buildEvidenceQuery } from './store-query.ts';
import { SqliteEvidenceStore } from './sqlite-store.ts';

describe('buildEvidenceQuery', () => {
  it('binds every filter as a parameter, newest first, with numbered placeholders on PostgreSQL', () => {
    const q = {
      app: 'a',
      env: 'prod',
      actor: 'alice',
      type: ['auth.failed', 'auth.signed-in'],
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-02-01T00:00:00.000Z',
      text: "O'Brien",
      beforeSeq: 500,
      limit: 50,
    };
    const pg = buildEvidenceQuery(q, 'postgres');
    expect(pg.sql).toBe(
      'SELECT * FROM evidence WHERE app = $1 AND env = $2 AND actor = $3 AND type IN ($4, $5) AND time >= $6 AND time <= $7 AND ' +
        "(strpos(lower(actor), lower($8)) > 0 OR strpos(lower(type), lower($9)) > 0 OR strpos(lower(coalesce(app, '')), lower($10)) > 0 OR strpos(lower(data), lower($11)) > 0) AND seq < $12 ORDER BY seq DESC LIMIT $13",
    );
    expect(pg.args).toEqual([
      'a',
      'prod',
      'alice',
      'auth.failed',
      'auth.signed-in',
      q.from,
      q.to,
      "O'Brien",
      "O'Brien",
      "O'Brien",
      "O'Brien",
      500,
      50,
    ]);
    const lite = buildEvidenceQuery(q, 'sqlite');
    expect(lite.sql).not.toContain('$');
    expect(lite.sql).toContain('instr(lower(data), lower(?)) > 0');
    expect(lite.args).toEqual(pg.args);
  });

  it('one type is an equality, ascending order for exports, the limit is bounded', () => {
    const b = buildEvidenceQuery({ type: 'auth.failed', afterSeq: 7, order: 'asc', limit: 10_000_000 }, 'sqlite');
    expect(b.sql).toBe('SELECT * FROM evidence WHERE type = ? AND seq > ? ORDER BY seq ASC LIMIT ?');
    expect(b.args).toEqual(['auth.failed', 7, 5000]);
    expect(buildEvidenceQuery({}, 'sqlite').sql).toBe('SELECT * FROM evidence ORDER BY seq DESC LIMIT ?');
  });
});

describe('SqliteEvidenceStore.list', () => {
  const dir = mkdtempSync(join(tmpdir(), 'evidence-query-'));
  let store: SqliteEvidenceStore;
  const ev = (i: number): EvidenceInput => ({
    time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    type: i % 5 === 0 ? 'auth.failed' : i % 2 ? 'app.revision-observed' : 'drift.detected',
    actor: i % 3 === 0 ? 'Alice' : 'kustomize-controller',
    app: `nonprod/flux-system/kustomization/app-${i % 4}`,
    cluster: i % 2 ? 'nonprod' : 'prod',
    env: i % 2 ? 'dev' : 'prod',
    data: { n: i, note: i === 42 ? 'Rolled back by Ops' : 'x' },
  });
  beforeAll(async () => {
    store = SqliteEvidenceStore.open(dir, 'q.sqlite');
    for (let i = 1; i <= 120; i++) await store.append(ev(i));
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('filters by env, cluster, actor, one or several types and a time range', async () => {
    const prodAlice = await store.list({ env: 'prod', actor: 'Alice', limit: 1000 });
    expect(prodAlice.length).toBeGreaterThan(0);
    expect(prodAlice.every((e) => e.env === 'prod' && e.actor === 'Alice' && Number(e.data.n) % 6 === 0)).toBe(true);
    const two = await store.list({ type: ['auth.failed', 'drift.detected'], cluster: 'prod', limit: 1000 });
    expect(new Set(two.map((e) => e.type))).toEqual(new Set(['auth.failed', 'drift.detected']));
    const range = await store.list({ from: ev(10).time, to: ev(20).time, limit: 1000 });
    expect(range.map((e) => e.seq)).toEqual([20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10]);
  });

  it('searches actor, type, app and data case-insensitively', async () => {
    expect((await store.list({ text: 'rolled BACK' })).map((e) => e.seq)).toEqual([42]);
    expect((await store.list({ text: 'alice', limit: 5 })).every((e) => e.actor === 'Alice')).toBe(true);
    expect((await store.list({ text: 'AUTH.FAILED', limit: 1000 })).length).toBe(24);
    expect((await store.list({ text: 'APP-3', limit: 1000 })).length).toBe(30);
    expect(await store.list({ text: '%' })).toEqual([]);
  });

  it('pages by keyset: newest first, each page below the last seq of the one before', async () => {
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await store.list({ env: 'dev', limit: 25, ...(before ? { beforeSeq: before } : {}) });
      seen.push(...page.map((e) => e.seq));
      if (page.length < 25) break;
      before = page.at(-1)?.seq;
    }
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => 119 - 2 * i));
  });

  it('walks an index ending in seq for every filter (no sort of the matches)', () => {
    for (const q of [
      { app: 'a', type: ['auth.failed'], beforeSeq: 10 },
      { env: 'dev', beforeSeq: 10 },
      { cluster: 'prod' },
      { actor: 'Alice' },
    ]) {
      const { sql, args } = buildEvidenceQuery({ ...q, limit: 50 }, 'sqlite');
      const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('; ');
      expect(plan).toMatch(/USING (COVERING )?INDEX evidence_/);
      expect(plan).not.toContain('TEMP B-TREE');
    }
  });
});
