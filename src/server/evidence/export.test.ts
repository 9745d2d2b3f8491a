// Export formats (JSONL exactly as stored, CSV per RFC 4180 with formula-injection neutralised), the batched,
// ascending, snapshot export, and the signed trailer that ends it (what was exported and what was left out).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvidenceExportTrailer } from '../../api/schemas.ts';
import { GENESIS_HASH, type EvidenceEvent } from '../../domain/evidence.ts';
import { link, sha256 } from './store.ts';
import { SqliteEvidenceStore } from './sqlite-store.ts';
import { csvField, csvLine, CSV_HEADER, exportChunks, fromEvent, jsonlLine } from './export.ts';
import { CsvParser, neutralise, unneutralise } from './export-csv.ts';
import { keyIdOf, trailerSignatureOk } from './export-trailer.ts';
import { verifyExportLines, verifyExportText } from './offline-verify.ts';

const collect = async (g: AsyncGenerator<string>) => {
  let s = '';
  for await (const c of g) s += c;
  return s;
};
const key = (() => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
})();
const trailerOf = (text: string) => {
  const last = text.trimEnd().split('\n').at(-1) ?? '';
  return EvidenceExportTrailer.parse(JSON.parse(last));
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
    // the empty string is quoted, null is nothing: the verifier tells them apart
    ['', '""'],
    [null, ''],
    [42, '42'],
  ])('csvField(%j) → %j', (v, out) => expect(csvField(v)).toBe(out));

  // OWASP CSV injection: each character a spreadsheet reads as the start of a formula gets a leading quote
  it.each([
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['=1+2', "'=1+2"],
    ['+1', "'+1"],
    ['-alice', "'-alice"],
    ['@admin', "'@admin"],
    ['\tcmd', "'\tcmd"],
    ['\rcmd', `"'\rcmd"`],
    // and the quote itself, so that taking one off again is exact
    ["'quoted", "''quoted"],
  ])('csvField(%j) is neutralised → %j', (v, out) => {
    expect(csvField(v)).toBe(out);
    expect(unneutralise(neutralise(v))).toBe(v);
  });

  it.each(['a=b', 'x+1', 'a-b', 'me@host', 'in\tside', ' =not first', '{"a":"=b"}'])(
    'csvField(%j) is left alone (the character is not first)',
    (v) => expect(new CsvParser().push(`${csvField(v)}\n`)[0]?.cells[0]?.value).toBe(v),
  );

  it('a CSV row: header columns, data as JSON text, CRLF', () => {
    expect(CSV_HEADER).toBe('seq,time,type,actor,app,cluster,env,data,prevHash,hash\r\n');
    const row = csvLine(fromEvent(e));
    expect(row).toBe(
      `1,2026-01-01T00:00:00.000Z,auth.failed,"Mallory ""the, tester""",,,,"${JSON.stringify(e.data).replace(/"/g, '""')}",${e.prevHash},${e.hash}\r\n`,
    );
  });

  it('the CSV parser gives back every cell, whatever the chunks (quotes, commas, CR, LF split anywhere)', () => {
    const rows = [
      ['1', '"x"', 'a,b', 'two\r\nlines', "'=1", '', 'cr\r'],
      ['2', 'plain', '', '', 'z', 'é', '\n'],
    ];
    const text = rows.map((r) => `${r.map((c) => csvField(c)).join(',')}\r\n`).join('');
    for (const size of [1, 2, 3, 7, text.length]) {
      const p = new CsvParser();
      const got = [];
      for (let i = 0; i < text.length; i += size) got.push(...p.push(text.slice(i, i + size)));
      got.push(...p.end());
      expect(got.map((r) => r.cells.map((c) => unneutralise(c.value)))).toEqual(rows);
      expect(got.map((r) => r.line)).toEqual([1, 3]);
      expect(got[0]?.cells[5]).toEqual({ value: '', quoted: true });
    }
    expect(new CsvParser().push('"a"b,c\n')[0]?.error).toMatch(/text after a closing quote/);
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
        actor: i === 5 ? '=HYPERLINK("x")' : i === 6 ? '@alice' : i === 7 ? '-bob' : 'c',
        app: i === 8 ? '' : 'a',
        cluster: i % 3 ? 'nonprod' : 'prod',
        env: 'dev',
        data: { i },
      });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams everything in ascending seq in batches, then a signed trailer of the whole chain; it verifies', async () => {
    const chunks: string[] = [];
    const now = () => new Date('2026-02-01T00:00:00.000Z');
    for await (const c of exportChunks(store, {}, { format: 'jsonl', batchSize: 10, key, now })) chunks.push(c);
    expect(chunks).toHaveLength(4); // three batches, the trailer
    const lines = chunks.join('').trimEnd().split('\n');
    expect(lines.slice(0, -1).map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    const [head] = await store.list({ limit: 1 });
    const t = trailerOf(chunks.join(''));
    expect(t).toMatchObject({
      trailer: 'gitops-console evidence export v1',
      format: 'jsonl',
      time: '2026-02-01T00:00:00.000Z',
      filter: null,
      firstSeq: 1,
      lastSeq: 25,
      count: 25,
      lastHash: head?.hash,
      headSeq: 25,
      headHash: head?.hash,
      keyId: keyIdOf(key.publicKey),
    });
    const all = await store.list({ order: 'asc', limit: 100 });
    expect(t.digest).toBe(sha256(all.map((e) => `${e.hash}\n`).join('')));
    expect(trailerSignatureOk(t, key.pem)).toBe(true);
    expect(trailerSignatureOk({ ...t, count: 24 }, key.pem)).toBe(false);
    expect(verifyExportLines(lines, { publicKey: key.pem })).toMatchObject({
      ok: true,
      mode: 'full',
      count: 25,
      trailer: { signature: 'valid', filter: null },
    });
  });

  it('a CSV export: formulas neutralised, the empty app kept apart from null, and it verifies as CSV', async () => {
    const text = await collect(exportChunks(store, {}, { format: 'csv', key }));
    const rows = text.split('\r\n');
    expect(rows[0]).toBe(CSV_HEADER.trimEnd());
    expect(rows[5]).toMatch(/^5,[^,]+,app\.revision-observed,"'=HYPERLINK\(""x""\)",a,/);
    expect(rows[6]).toMatch(/^6,[^,]+,drift\.detected,'@alice,a,/);
    expect(rows[7]).toMatch(/^7,[^,]+,app\.revision-observed,'-bob,a,/);
    expect(rows[8]).toMatch(/^8,[^,]+,drift\.detected,c,"",/);
    // no cell anywhere starts with a formula character
    for (const row of rows)
      for (const cell of row.split(',')) expect(cell.replace(/^"/, '')).not.toMatch(/^[=+\-@\t\r]/);
    expect(rows.at(-2)).toMatch(
      /^trailer,,,,,,,"\{""trailer"":""gitops-console evidence export v1"",""format"":""csv""/,
    );
    const r = verifyExportText([text], { publicKey: key.pem });
    expect(r).toMatchObject({ ok: true, mode: 'full', format: 'csv', count: 25 });
    // an event edited in the CSV is caught; so is a formula whose neutralising quote was taken off
    expect(verifyExportText([text.replace("'-bob", "'-rob")]).problems[0]).toEqual({
      seq: 7,
      reason: 'event 7 was changed: its content does not match its hash',
    });
    const stripped = text.replace(`"'=HYPERLINK(""x"")"`, `"=HYPERLINK(""x"")"`);
    expect(verifyExportText([stripped]).problems[0]).toEqual({
      seq: 5,
      reason:
        'line 6: its actor starts with "=" without the quote the export puts in front (not as exported, and unsafe to open in a spreadsheet) (near event 5)',
    });
  });

  it('applies the filters and the per-grant visibility, stops at the head it started with, and says so in the trailer', async () => {
    const [head] = await store.list({ limit: 1 });
    const gen = exportChunks(
      store,
      { type: 'drift.detected' },
      {
        format: 'csv',
        batchSize: 4,
        visible: { grants: ['reviewer@nonprod/*'], test: (e) => e.cluster === 'nonprod' },
        key,
      },
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
    const rows = rest.trimEnd().split('\r\n');
    expect(rows.slice(0, -1).map((l) => Number(l.split(',')[0]))).toEqual([2, 4, 8, 10, 14, 16, 20, 22]);
    const r = verifyExportText([CSV_HEADER, rest], { mode: 'filtered', publicKey: key.pem });
    expect(r).toMatchObject({
      ok: true,
      mode: 'filtered',
      count: 8,
      trailer: {
        filter: { query: { type: 'drift.detected' }, permissions: ['reviewer@nonprod/*'] },
        headSeq: head?.seq,
        headHash: head?.hash,
        signature: 'valid',
      },
    });
    // without --filtered it is refused, and says why
    expect(verifyExportText([CSV_HEADER, rest]).problems[0]?.reason).toMatch(
      /^a filtered export \(its trailer says: type=drift\.detected; events outside the reader's grants left out \(reviewer@nonprod\/\*\)\): verify it with --filtered/,
    );
  });

  it('only the reader grants hiding events makes it a filtered export too', async () => {
    const text = await collect(
      exportChunks(store, {}, { format: 'jsonl', visible: { grants: ['auditor@prod/*'], test: () => true } }),
    );
    expect(trailerOf(text).filter).toEqual({ permissions: ['auditor@prod/*'] });
    expect(verifyExportText([text]).ok).toBe(false);
  });

  it('an empty store exports the header and a trailer of nothing, which verifies', async () => {
    const empty = SqliteEvidenceStore.open(dir, 'empty.sqlite');
    const csv = await collect(exportChunks(empty, {}, { format: 'csv', key }));
    expect(csv.startsWith(CSV_HEADER)).toBe(true);
    const jsonl = await collect(exportChunks(empty, {}, { format: 'jsonl', key }));
    expect(trailerOf(jsonl)).toMatchObject({
      firstSeq: null,
      lastSeq: null,
      count: 0,
      lastHash: null,
      headSeq: 0,
      headHash: GENESIS_HASH,
    });
    expect(verifyExportText([jsonl], { publicKey: key.pem })).toMatchObject({ ok: true, count: 0 });
    expect(verifyExportText([csv], { publicKey: key.pem })).toMatchObject({ ok: true, count: 0, format: 'csv' });
    await empty.close();
  });
});
