// `npm run cli -- evidence verify` as a command: exit 0 for an intact full export and for a filtered one with
// --filtered, 1 naming what is wrong for each way of tampering, 2 for bad usage. Files written as the console
// writes them (exportChunks over a real SQLite store), JSONL and CSV.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportChunks } from '../evidence/export.ts';
import { signCheckpoint } from '../evidence/signing.ts';
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
  // a chain recorded since exports have trailers: one event a day from 2026-12-01, the fourth after 15:03:32 UTC
  const recent = SqliteEvidenceStore.open(dir, 'recent.sqlite');
  for (let i = 1; i <= 6; i++)
    await recent.append({
      time: new Date(Date.UTC(2026, 10, 28 + i, 12)).toISOString(),
      type: 'auth.signed-in',
      actor: 'alice',
      data: { i },
    });
  let s = '';
  for await (const c of exportChunks(recent, {}, { format: 'jsonl', key })) s += c;
  writeFileSync(file('recent.jsonl'), s);
  await recent.close();
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

  it('--without-trailer: an export made before trailers passes; one holding a later event had a trailer, and fails', async () => {
    // every event of full.jsonl was recorded in January 2026, before exports had trailers
    const old = tamper('full.jsonl', 'old-style.jsonl', (l) => l.slice(0, -1));
    const ok = await run('verify', old, '--without-trailer', '--allow-unsigned');
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('no trailer checked (--without-trailer)');
    // recent.jsonl's events 1–3 are from before 2026-12-01T15:03:32Z, 4–6 after: its trailer (and event 6) removed
    const cut = tamper('recent.jsonl', 'recent-cut.jsonl', (l) => l.slice(0, -2));
    const r = await run('verify', cut, '--without-trailer', '--allow-unsigned');
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toBe(
      'BROKEN at event 4: event 4 was recorded 2026-12-02T12:00:00.000Z, since exports end with a signed trailer ' +
        "(2026-12-01T15:03:32.000Z): an export holding it was made with one, so this file's trailer was removed " +
        '(and events after event 5 may be too) — verify the export as it was downloaded, without --without-trailer',
    );
    // the first three alone: an export of before trailers, as far as anyone can tell
    const early = tamper('recent.jsonl', 'recent-early.jsonl', (l) => l.slice(0, 3));
    expect((await run('verify', early, '--without-trailer', '--allow-unsigned')).code).toBe(0);
  });

  it('--checkpoints: one past the head of the export fails, named; those within it are checked', async () => {
    const events = readFileSync(file('full.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as { seq: number; hash: string });
    const cp = (seq: number, hash: string, time: string) => signCheckpoint({ seq, hash }, time, privateKey);
    const within = [
      cp(10, events[9]!.hash, '2026-01-01T00:00:11.000Z'),
      cp(50, events[49]!.hash, '2026-01-01T00:01:00.000Z'),
    ];
    // the chain went on to event 58 after the export was made (or the export was cut and its trailer re-signed)
    const past = [...within, cp(58, 'f'.repeat(64), '2026-01-01T00:02:00.000Z')];
    writeFileSync(file('cp-within.json'), JSON.stringify({ checkpoints: within }));
    writeFileSync(file('cp-past.json'), JSON.stringify({ checkpoints: past }));
    const ok = await run('verify', file('full.jsonl'), '--public-key', pub, '--checkpoints', file('cp-within.json'));
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('signed checkpoints: 2 match\n');
    const r = await run('verify', file('full.jsonl'), '--public-key', pub, '--checkpoints', file('cp-past.json'));
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toBe(
      'BROKEN at event 58: the checkpoint of 2026-01-01T00:02:00.000Z names event 58, past the end of this export ' +
        '(event 50, the head its trailer names): events were cut from the end of the export, or the checkpoints ' +
        'were fetched after it — fetch the checkpoints first, then the export, or give only the checkpoints up to event 50',
    );
    // a filtered export: its head is the trailer's (event 50), not its last event (49)
    const dev = await run(
      'verify',
      file('dev.jsonl'),
      '--filtered',
      '--public-key',
      pub,
      '--checkpoints',
      file('cp-within.json'),
    );
    expect(dev.code).toBe(0);
    expect(dev.out).toContain('signed checkpoints: 0 match; 2 name events not in the file (10, 50)');
    const devPast = await run(
      'verify',
      file('dev.jsonl'),
      '--filtered',
      '--public-key',
      pub,
      '--checkpoints',
      file('cp-past.json'),
    );
    expect(devPast.code).toBe(1);
    expect(devPast.out.split('\n')[0]).toMatch(
      /^BROKEN at event 58: .* names event 58, past the end of this export \(event 50,/,
    );
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
