// The evidence test vector (test/vectors/evidence/, made once by its generate.ts with the console's own code)
// against docs/reference/evidence-format.md. The console's verifier (`cli evidence verify`) accepts it; a second,
// minimal verifier written in this file from the page alone — canonical JSON, the hashed text, the digest, the
// trailer's and checkpoints' signed messages, the key id, CSV reading — recomputes every hash and signature and
// finds the hashes the page lists, so neither the page nor the vector can drift; and an edited byte, a dropped
// line and a broken signature each fail both verifiers.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evidenceCli } from '../../src/server/cli/evidence.ts';

const root = join(import.meta.dirname, '..', '..');
const vec = (name: string) => join(root, 'test/vectors/evidence', name);
const read = (name: string) => readFileSync(vec(name), 'utf8');
const page = readFileSync(join(root, 'docs/reference/evidence-format.md'), 'utf8');
const pem = read('public-key.pem');
const tmp = mkdtempSync(join(tmpdir(), 'evidence-vector-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await evidenceCli(args, { out: (s) => (out += s), err: (s) => (out += s) });
  return { code, out };
}

// ---- the independent verifier: only what the page says ----

/** keys sorted by UTF-16 code units */
function utf16Order(a: string, b: string): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d) return d;
  }
  return a.length - b.length;
}

const hex4 = (c: number) => `\\u${c.toString(16).padStart(4, '0')}`;
const SHORT: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 34: '\\"', 92: '\\\\' };

function quote(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    if (SHORT[c]) out += SHORT[c];
    else if (c < 0x20) out += hex4(c);
    else if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) out += s.slice(i, ++i + 1);
    else if (c >= 0xd800 && c <= 0xdfff)
      out += hex4(c); // a lone surrogate
    else out += s[i];
  }
  return `${out}"`;
}

function canonical(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error('non-finite');
    return String(v); // ECMAScript Number::toString
  }
  if (typeof v === 'string') return quote(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort(utf16Order)
    .map((k) => `${quote(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}

const GENESIS = '0'.repeat(64);
const sha256 = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const utf8 = (s: string) => Buffer.from(s, 'utf8');

interface Rec {
  seq: number;
  time: string;
  type: string;
  actor: string;
  app: string | null;
  cluster: string | null;
  env: string | null;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
}
type Trailer = Record<string, unknown> & { signature: string | null };

function hashedText(r: Rec): string {
  const { seq, time, type, actor, app, cluster, env, data, prevHash } = r;
  return prevHash + canonical({ seq, time, type, actor, app, cluster, env, data, prevHash });
}
const recordHash = (r: Rec) => sha256(utf8(hashedText(r)));
const keyIdOf = (key: string) => `sha256:${sha256(createPublicKey(key).export({ type: 'spki', format: 'der' }))}`;
const ed25519 = (text: string, signature: string, key: string) =>
  verify(null, utf8(text), createPublicKey(key), Buffer.from(signature, 'base64'));

interface Parsed {
  records: Rec[];
  trailer?: Trailer;
  /** lines after the trailer, or that are not records */
  stray: number;
  format: 'jsonl' | 'csv';
}

const HEADER = 'seq,time,type,actor,app,cluster,env,data,prevHash,hash';

type Cell = { v: string; q: boolean };

/** RFC 4180 rows: each cell's text and whether it was quoted */
function csvRows(text: string): Cell[][] {
  const rows: Cell[][] = [];
  let row: Cell[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      let v = '';
      for (let j = i + 1; ;) {
        const close = text.indexOf('"', j);
        v += text.slice(j, close);
        if (text[close + 1] !== '"') {
          i = close + 1;
          break;
        }
        v += '"';
        j = close + 2;
      }
      row.push({ v, q: true });
    } else {
      const v = /[^,\r\n]*/y;
      v.lastIndex = i;
      const bare = v.exec(text)?.[0] ?? '';
      i += bare.length;
      row.push({ v: bare, q: false });
    }
    if (text[i] === ',') i++;
    else {
      rows.push(row);
      row = [];
      i += text.startsWith('\r\n', i) ? 2 : 1;
    }
  }
  return rows;
}

function parse(text: string): Parsed {
  const first = text.split('\n', 1)[0]?.replace(/\r$/, '');
  const out: Parsed = { records: [], stray: 0, format: first === HEADER ? 'csv' : 'jsonl' };
  const take = (o: Record<string, unknown>) => {
    if (out.trailer) out.stray++;
    else if ('trailer' in o) out.trailer = o as Trailer;
    else out.records.push(o as unknown as Rec);
  };
  if (out.format === 'jsonl') {
    for (const line of text.split('\n')) if (line.trim()) take(JSON.parse(line) as Record<string, unknown>);
    return out;
  }
  const unquote = (v: string) => (v.startsWith("'") ? v.slice(1) : v);
  for (const cells of csvRows(text).slice(1)) {
    const at = (i: number) => unquote(cells[i]?.v ?? '');
    const nullable = (i: number) => (cells[i]?.q || cells[i]?.v ? at(i) : null);
    if (at(0) === 'trailer') take(JSON.parse(at(7)) as Record<string, unknown>);
    else
      take({
        seq: Number(at(0)),
        time: at(1),
        type: at(2),
        actor: at(3),
        app: nullable(4),
        cluster: nullable(5),
        env: nullable(6),
        data: JSON.parse(at(7)) as unknown,
        prevHash: at(8),
        hash: at(9),
      });
  }
  return out;
}

/** Every problem the page's rules find; `filtered`: the record-by-record check. */
function independentVerify(text: string, key: string, filtered = false): string[] {
  const p = parse(text);
  const problems: string[] = [];
  let prev: Rec | undefined;
  const digest = createHash('sha256');
  for (const r of p.records) {
    if (!filtered && r.seq !== (prev?.seq ?? 0) + 1) problems.push(`seq ${r.seq} out of place`);
    if (filtered && prev && r.seq <= prev.seq) problems.push(`seq ${r.seq} out of order`);
    if (recordHash(r) !== r.hash) problems.push(`record ${r.seq} does not match its hash`);
    const before = r.seq === 1 ? GENESIS : prev?.seq === r.seq - 1 ? prev.hash : undefined;
    if ((!filtered || before !== undefined) && r.prevHash !== (before ?? prev?.hash ?? GENESIS))
      problems.push(`record ${r.seq} does not link`);
    digest.update(utf8(`${r.hash}\n`));
    prev = r;
  }
  const t = p.trailer;
  if (!t) return [...problems, 'no trailer'];
  if (p.stray) problems.push('lines after the trailer');
  const first = p.records[0];
  const last = p.records.at(-1);
  const expect: Record<string, unknown> = {
    trailer: 'gitops-console evidence export v1',
    format: p.format,
    firstSeq: first?.seq ?? null,
    lastSeq: last?.seq ?? null,
    count: p.records.length,
    lastHash: last?.hash ?? null,
    digest: digest.digest('hex'),
    keyId: keyIdOf(key),
    ...(filtered ? {} : { filter: null, headSeq: last?.seq ?? 0, headHash: last?.hash ?? GENESIS }),
  };
  for (const [k, v] of Object.entries(expect)) if (t[k] !== v) problems.push(`trailer ${k} is ${String(t[k])}`);
  const { signature, ...signed } = t;
  const message = `gitops-console evidence export trailer v1\n${canonical(signed)}`;
  if (!signature || !ed25519(message, signature, key)) problems.push('trailer signature');
  return problems;
}

// ---- the vector ----

const jsonl = read('export.jsonl');
const csv = read('export.csv');
const filteredJsonl = read('export-filtered.jsonl');

/** the page's table of expected hashes */
const pageHashes = [...page.matchAll(/^\|\s*(\d+)\s*\|\s*`([a-z.-]+)`\s*\|\s*`([0-9a-f]{64})`\s*\|$/gm)].map((m) => ({
  seq: Number(m[1]),
  type: m[2],
  hash: m[3],
}));

describe('the evidence test vector and docs/reference/evidence-format.md', () => {
  it("the console's own verifier accepts every file of the vector", async () => {
    const key = ['--public-key', vec('public-key.pem')];
    const cps = ['--checkpoints', vec('checkpoints.json')];
    const full = await cli('verify', vec('export.jsonl'), ...key, ...cps, '--manifests', vec('manifests.jsonl'));
    expect(full.code).toBe(0);
    expect(full.out).toContain(`OK: 5 events, one intact chain from event 1; head ${pageHashes.at(-1)?.hash}\n`);
    expect(full.out).toContain(`signature valid (key ${keyIdOf(pem)})`);
    expect(full.out).toContain('signed checkpoints: 2 match');
    expect(full.out).toContain("manifests OK: 1 checked against their render hashes; all 1 the export's releases");
    expect((await cli('verify', vec('export.csv'), ...key, ...cps)).code).toBe(0);
    const filtered = await cli('verify', vec('export-filtered.jsonl'), '--filtered', ...key, ...cps);
    expect(filtered.code).toBe(0);
    expect(filtered.out).toContain('links not checked (the event before is not in the file): 2: →2, 3→5');
    // a filtered export is no full one; without a key the CLI refuses to judge
    expect((await cli('verify', vec('export-filtered.jsonl'), ...key)).code).toBe(1);
    expect((await cli('verify', vec('export.jsonl'))).code).toBe(2);
  });

  it('an implementation written from the page alone recomputes every hash the page lists', () => {
    expect(pageHashes.map((h) => h.seq)).toEqual([1, 2, 3, 4, 5]);
    for (const text of [jsonl, csv]) {
      const { records } = parse(text);
      expect(records.map((r) => ({ seq: r.seq, type: r.type, hash: recordHash(r) }))).toEqual(pageHashes);
      expect(records.map((r) => r.hash)).toEqual(pageHashes.map((h) => h.hash));
      expect(independentVerify(text, pem)).toEqual([]);
    }
    expect(independentVerify(filteredJsonl, pem, true)).toEqual([]);
    expect(parse(filteredJsonl).records.map((r) => r.seq)).toEqual([2, 3, 5]);

    // the exact text the page shows for record 1, and record 4's canonical data
    const [r1, , r3, r4] = parse(jsonl).records as [Rec, Rec, Rec, Rec, Rec];
    expect(page).toContain(`\n${hashedText(r1)}\n`);
    expect(Buffer.byteLength(hashedText(r1))).toBe(Number(/\(([0-9]+) bytes\):/.exec(page)?.[1]));
    const shown = /\n(\{"Zeta".*)\n/.exec(page)?.[1]?.replace('<U+007F>', '\u007f').replace('<U+2028>', '\u2028');
    expect(shown).toBe(canonical(r4.data));
    // the page's trap: code-point order would put ﬁ (U+FB01) before 😀 (U+1F600)
    expect(canonical(r4.data).indexOf('😀')).toBeLessThan(canonical(r4.data).indexOf('ﬁ'));

    // digests and key id as the page states them
    const digests = [jsonl, filteredJsonl].map((t) => parse(t).trailer?.digest as string);
    for (const d of digests) expect(page).toContain(d);
    expect(page).toContain(keyIdOf(pem));
    expect(createPublicKey(pem).export({ type: 'spki', format: 'der' }).subarray(0, 12).toString('hex')).toBe(
      '302a300506032b6570032100',
    );

    // checkpoints: signed message and the hashes they name
    const { checkpoints } = JSON.parse(read('checkpoints.json')) as {
      checkpoints: Array<{ seq: number; hash: string; time: string; signature: string }>;
    };
    expect(checkpoints.map((c) => c.seq)).toEqual([3, 5]);
    for (const c of checkpoints) {
      expect(c.hash).toBe(pageHashes[c.seq - 1]?.hash);
      const text = `gitops-console evidence checkpoint v1\n${canonical({ seq: c.seq, hash: c.hash, time: c.time })}`;
      expect(ed25519(text, c.signature, pem)).toBe(true);
    }

    // the manifests bundle: the header, then an entry hashing to the render hash record 3 kept
    const [header, entry] = read('manifests.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(header).toEqual({ bundle: 'gitops-console release manifests v1' });
    expect(entry?.renderHash).toBe(`sha256:${sha256(utf8(entry?.canonical ?? ''))}`);
    expect(entry?.renderHash).toBe(r3.data.renderHash);
    expect(r3.data.manifest).toBe('stored');
  });

  const tampered: Array<[string, string, (s: string) => string, RegExp, boolean?]> = [
    [
      'one byte of record 3',
      'export.jsonl',
      (s) => s.replace('"objects":1,"manifest"', '"objects":2,"manifest"'),
      /^BROKEN at event 3: event 3 was changed/,
    ],
    [
      'one byte of record 2 (CSV)',
      'export.csv',
      (s) => s.replace('frz-7', 'frz-8'),
      /^BROKEN at event 2: event 2 was changed/,
    ],
    [
      'the last record dropped',
      'export.jsonl',
      (s) =>
        s
          .split('\n')
          .filter((_, i) => i !== 4)
          .join('\n'),
      /^BROKEN at event 5: event 5 is missing at the end/,
    ],
    [
      'the trailer dropped',
      'export.jsonl',
      (s) => s.split('\n').slice(0, 5).join('\n') + '\n',
      /^BROKEN at event 5: no trailer after event 5/,
    ],
    [
      'the signature broken',
      'export.jsonl',
      (s) => s.replace(/"signature":"(.)/, (_, c: string) => `"signature":"${c === 'A' ? 'B' : 'A'}`),
      /^BROKEN: the trailer's signature does not verify: the trailer was altered/,
    ],
    [
      'a record dropped from a filtered export',
      'export-filtered.jsonl',
      (s) =>
        s
          .split('\n')
          .filter((_, i) => i !== 1)
          .join('\n'),
      /^BROKEN: the trailer counts 3 events, the file has 2/,
      true,
    ],
  ];

  it.each(tampered)('%s fails both verifiers', async (_name, file, edit, verdict, filtered) => {
    const text = edit(read(file));
    expect(text).not.toBe(read(file));
    const path = join(tmp, `${_name.replace(/\W+/g, '-')}-${file}`);
    writeFileSync(path, text);
    const r = await cli('verify', path, '--public-key', vec('public-key.pem'), ...(filtered ? ['--filtered'] : []));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(verdict);
    expect(independentVerify(text, pem, filtered)).not.toEqual([]);
  });

  it('a checkpoint altered (its signature, or the hash it names) fails', async () => {
    const cps = JSON.parse(read('checkpoints.json')) as { checkpoints: Array<{ hash: string; signature: string }> };
    const [c3] = cps.checkpoints as [{ hash: string; signature: string }];
    for (const [what, change] of [
      ['signature', () => (c3.signature = `${c3.signature[0] === 'A' ? 'B' : 'A'}${c3.signature.slice(1)}`)],
      ['hash', () => (c3.hash = pageHashes[1]?.hash ?? '')],
    ] as const) {
      const saved = { ...c3 };
      change();
      const path = join(tmp, `checkpoints-${what}.json`);
      writeFileSync(path, JSON.stringify(cps));
      const r = await cli('verify', vec('export.jsonl'), '--public-key', vec('public-key.pem'), '--checkpoints', path);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/^BROKEN at event 3: the checkpoint of event 3 .* has no valid signature/);
      Object.assign(c3, saved);
    }
  });
});
