// `npm run cli -- evidence verify` as a command: exit 0 for an intact full export and for a filtered one with
// --filtered, 1 naming what is wrong for each way of tampering, 2 for bad usage. Files written as the console
// writes them (exportChunks over a real SQLite store), JSONL and CSV.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportChunks } from '../evidence/export.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { evidenceCli } from './evidence.ts';

const dir = mkdtempSync(join(tmpdir(), 'cli-evidence-'));
const file = (n: string) => join(dir, n);
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const key = { privateKey, publicKey };
const pub = file('checkpoint.pub');

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await evidenceCli(args, { out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

beforeAll(async () => {
  writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }).toString());
  const store = SqliteEvidenceStore.open(dir, 'evidence.sqlite');
  for (let i = 1; i <= 50; i++)
    await store.append({
      time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      type: i % 3 ? 'app.revision-observed' : 'drift.detected',
      actor: i === 9 ? '=HYPERLINK("x")' : 'kustomize-controller',
      app: 'nonprod/flux-system/kustomization/app',
      cluster: 'nonprod',
      env: i % 2 ? 'dev' : 'staging',
      data: { i, note: i === 4 ? 'two\nlines, "quoted"' : 'x' },
    });
  const write = async (name: string, format: 'jsonl' | 'csv', filter = {}) => {
    let s = '';
    for await (const c of exportChunks(store, filter, { format, key })) s += c;
    writeFileSync(file(name), s);
  };
  await write('full.jsonl', 'jsonl');
  await write('full.csv', 'csv');
  await write('dev.jsonl', 'jsonl', { env: 'dev' });
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tamper = (from: string, to: string, change: (lines: string[]) => string[]) => {
  const lines = readFileSync(file(from), 'utf8').trimEnd().split('\n');
  writeFileSync(file(to), `${change(lines).join('\n')}\n`);
  return file(to);
};

describe('evidence verify', () => {
  it('an intact full export: exit 0, JSONL and CSV, with the key the trailer signature too', async () => {
    const r = await run('verify', file('full.jsonl'), '--public-key', pub);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(
      /^OK: 50 events, one intact chain from event 1; head [0-9a-f]{64}\ntrailer: a full export .*signature valid/,
    );
    const csv = await run('verify', file('full.csv'), '--public-key', pub);
    expect(csv.code).toBe(0);
    expect(csv.out).toMatch(/^OK: 50 events, one intact chain from event 1/);
    // without the key: refused (exit 2), unless the operator allows an unsigned check (issue 40)
    const refused = await run('verify', file('full.jsonl'));
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/^no --public-key: the signature of the trailer would not be checked/);
    expect(refused.out).toBe('');
    expect((await run('verify', file('full.jsonl'), '--allow-unsigned')).out).toContain('signature not checked');
  });

  it('a file cut at its end with a re-made unsigned trailer: refused without the key, caught with it (issue 40)', async () => {
    const lines = readFileSync(file('full.jsonl'), 'utf8').trimEnd().split('\n');
    const trailer = JSON.parse(lines.at(-1) ?? '{}') as Record<string, unknown>;
    const kept = lines.slice(0, 40);
    const last = JSON.parse(kept.at(-1) ?? '{}') as { seq: number; hash: string };
    const remade = { ...trailer, head: last.hash, seq: last.seq, through: last.seq, count: 40 };
    delete (remade as { signature?: unknown }).signature;
    writeFileSync(file('remade.jsonl'), `${[...kept, JSON.stringify(remade)].join('\n')}\n`);
    expect((await run('verify', file('remade.jsonl'))).code).toBe(2);
    const withKey = await run('verify', file('remade.jsonl'), '--public-key', pub);
    expect(withKey.code).toBe(1);
  });

  it.each([
    ['(a) the first event removed', (l: string[]) => l.slice(1), 'BROKEN at event 1: event 1 is missing'],
    [
      '(b) the last 10 removed',
      (l: string[]) => [...l.slice(0, 40), l.at(-1) ?? ''],
      'BROKEN at event 41: events 41–50 are missing at the end',
    ],
    [
      '(c) two swapped',
      (l: string[]) => [...l.slice(0, 11), l[12] ?? '', l[11] ?? '', ...l.slice(13)],
      'BROKEN at event 12: event 12 is out of order',
    ],
    [
      '(d) one edited',
      (l: string[]) => l.map((x, i) => (i === 29 ? x.replace('"note":"x"', '"note":"y"') : x)),
      'BROKEN at event 30: event 30 was changed',
    ],
    ['(e) the trailer removed', (l: string[]) => l.slice(0, -1), 'BROKEN at event 50: no trailer after event 50'],
    [
      '(e) the trailer altered',
      (l: string[]) => [...l.slice(0, -1), (l.at(-1) ?? '').replace('"time":"2', '"time":"1')],
      "BROKEN: the trailer's signature does not verify: the trailer was altered",
    ],
  ])('%s: exit 1, naming what is wrong', async (name, change, says) => {
    const r = await run('verify', tamper('full.jsonl', `${name.slice(0, 3)}.jsonl`, change), '--public-key', pub);
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toContain(says);
  });

  it('a CSV export with an event cut from the end: exit 1', async () => {
    const text = readFileSync(file('full.csv'), 'utf8');
    const rows = text.trimEnd().split('\r\n');
    writeFileSync(file('cut.csv'), `${[...rows.slice(0, -2), rows.at(-1)].join('\r\n')}\r\n`);
    const r = await run('verify', file('cut.csv'), '--allow-unsigned');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^BROKEN at event 50: event 50 is missing at the end/);
  });

  it('a filtered export: exit 0 only with --filtered', async () => {
    const strict = await run('verify', file('dev.jsonl'), '--allow-unsigned');
    expect(strict.code).toBe(1);
    expect(strict.out).toMatch(
      /^BROKEN at event 1: a filtered export \(its trailer says: env=dev\): verify it with --filtered/,
    );
    const ok = await run('verify', file('dev.jsonl'), '--filtered', '--public-key', pub);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^OK: 25 events \(events 1–49\), each matches its hash; a filtered export/);
    expect(ok.out).toContain('trailer: filter: env=dev; of the chain up to event 50');
  });

  it('usage and I/O errors: exit 2', async () => {
    expect((await run('verify')).code).toBe(2);
    expect((await run('verify', file('full.jsonl'), '--full', '--filtered')).code).toBe(2);
    expect((await run('verify', file('full.jsonl'), '--bogus')).code).toBe(2);
    const missing = await run('verify', file('nope.jsonl'), '--allow-unsigned');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^error: ENOENT/);
    expect((await run('verify', file('full.jsonl'), '--public-key', file('full.jsonl'))).code).toBe(2);
  });
});
