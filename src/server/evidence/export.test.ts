// Export formats (JSONL exactly as stored, CSV per RFC 4180) and the batched, ascending, snapshot export.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import { link } from './store.ts';
import { SqliteEvidenceStore } from './sqlite-store.ts';
import { csvField, csvLine, CSV_HEADER, exportChunks, fromEvent, jsonlLine } from './export.ts';
import { verifyExportLines } from './offline-verify.ts';

const collect = async (g: AsyncGenerator<string>) => {
  let s = '';
  for await (const c of g) s += c;
  return s;
};

describe('formats', () => {
  const e: EvidenceEvent = link(undefined, {
    time: '2026-01-01T00:00:00.000Z',
    type: 'auth.failed',
    actor: 'Mallory "the, tester"',
    app: null,
    data: { reason: 'line one\nline two', n: 1.5, nested: { b: [1, null], a: 'é' } },
  });

  it('a JSONL line is the stored event, keys as EvidenceEvent', () => {
    const line = jsonlLine(fromEvent(e));
    expect(line.endsWith('\n')).toBe(true);
    expect(JSON.parse(line)).toEqual({ ...e, cluster: null, env: null });
    expect(Object.keys(JSON.parse(line) as object)).toEqual([
      'seq',
      'time',
      'type',
      'actor',
      'app',
      'cluster',
      'env',
      'data',
      'prevHash',
      'hash',
    ]);
  });

  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    ['', ''],
    [null, ''],
    [42, '42'],
  ])('csvField(%j) → %j', (v, out) => expect(csvField(v)).toBe(out));

  it('a CSV row: header columns, data as JSON text, CRLF', () => {
    expect(CSV_HEADER).toBe('seq,time,type,actor,app,cluster,env,data,prevHash,hash\r\n');
    const row = csvLine(fromEvent(e));
    expect(row).toBe(
      `1,2026-01-01T00:00:00.000Z,auth.failed,"Mallory ""the, tester""",,,,"${JSON.stringify(e.data).replace(/"/g, '""')}",${e.prevHash},${e.hash}\r\n`,
    );
  });
});

describe('exportChunks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'evidence-export-'));
  let store: SqliteEvidenceStore;
  beforeAll(async () => {
    store = SqliteEvidenceStore.open(dir, 'x.sqlite');
    for (let i = 1; i <= 25; i++)
      await store.append({
        time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
        type: i % 2 ? 'app.revision-observed' : 'drift.detected',
        actor: 'c',
        app: 'a',
        cluster: i % 3 ? 'nonprod' : 'prod',
        env: 'dev',
        data: { i },
      });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams everything in ascending seq in batches, one chunk per batch; a full export verifies', async () => {
    const chunks: string[] = [];
    for await (const c of exportChunks(store, {}, { format: 'jsonl', batchSize: 10 })) chunks.push(c);
    expect(chunks).toHaveLength(3);
    const lines = chunks.join('').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    expect(verifyExportLines(lines)).toMatchObject({ ok: true, mode: 'full', count: 25 });
  });

  it('applies the filters and the per-grant visibility, and stops at the head it started with', async () => {
    const gen = exportChunks(
      store,
      { type: 'drift.detected' },
      { format: 'csv', batchSize: 4, visible: (e) => e.cluster === 'nonprod' },
    );
    const first = await gen.next();
    expect(first.value).toBe(CSV_HEADER);
    await store.append({
      time: new Date().toISOString(),
      type: 'drift.detected',
      actor: 'c',
      cluster: 'nonprod',
      data: {},
    });
    let rest = '';
    for await (const c of gen) rest += c;
    const seqs = rest
      .trimEnd()
      .split('\r\n')
      .map((l) => Number(l.split(',')[0]));
    expect(seqs).toEqual([2, 4, 8, 10, 14, 16, 20, 22]);
  });

  it('an empty store exports only the CSV header', async () => {
    const empty = SqliteEvidenceStore.open(dir, 'empty.sqlite');
    expect(await collect(exportChunks(empty, {}, { format: 'csv' }))).toBe(CSV_HEADER);
    expect(await collect(exportChunks(empty, {}, { format: 'jsonl' }))).toBe('');
    await empty.close();
  });
});
