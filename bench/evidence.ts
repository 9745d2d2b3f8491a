// Evidence at scale: 1,000,000 hash-chained events in a temp SQLite store (BENCH_EVIDENCE_ROWS to scale
// down), then the browser's filtered page (app + type, limit 50) at 20 random cursors, p50/p90, and the
// export's throughput (records/s, JSONL to a file) against a plain `SELECT * … ORDER BY seq` streamed with
// better-sqlite3's iterate() to a file in the same run.
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EVIDENCE_TYPES, type EvidenceEvent } from '../src/domain/evidence.ts';
import { exportChunks } from '../src/server/evidence/export.ts';
import { link, type Row } from '../src/server/evidence/store.ts';
import { SqliteEvidenceStore } from '../src/server/evidence/sqlite-store.ts';

const N = Number(process.env.BENCH_EVIDENCE_ROWS ?? 1_000_000);
const APPS = 200;
const dir = mkdtempSync(join(tmpdir(), 'bench-evidence-'));

// a seeded generator: the same store every run
let seed = 42;
const rnd = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
const ENVS = ['dev', 'staging', 'prod'];
const ACTORS = [
  'kustomize-controller',
  'helm-controller',
  'console',
  ...Array.from({ length: 47 }, (_, i) => `user-${i}`),
];
const appName = (i: number) => `nonprod/flux-system/kustomization/app-${i}`;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function main() {
  const store = SqliteEvidenceStore.open(dir, 'bench.sqlite');
  const db = store.db;

  // fast path: one transaction, one prepared statement, the chain computed as the store computes it
  let t = performance.now();
  const insert = db.prepare(
    'INSERT INTO evidence (seq, time, type, actor, app, cluster, env, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const start = Date.UTC(2025, 0, 1);
  let prev: EvidenceEvent | undefined;
  db.transaction(() => {
    for (let i = 1; i <= N; i++) {
      const app = Math.floor(rnd() * APPS);
      const env = pick(ENVS);
      const e = link(prev, {
        time: new Date(start + i * 30_000).toISOString(),
        type: pick(EVIDENCE_TYPES),
        actor: pick(ACTORS),
        app: appName(app),
        cluster: env === 'prod' ? 'prod' : 'nonprod',
        env,
        data: { revision: `main@sha1:${(i * 2_654_435_761).toString(16).padStart(40, '0')}`, generation: i % 17 },
      });
      insert.run(e.seq, e.time, e.type, e.actor, e.app, e.cluster, e.env, JSON.stringify(e.data), e.prevHash, e.hash);
      prev = e;
    }
    db.prepare('INSERT INTO evidence_head (id, seq, hash) VALUES (1, ?, ?)').run(prev?.seq, prev?.hash);
  })();
  db.pragma('optimize');
  const insertS = (performance.now() - t) / 1000;
  console.log(`inserted ${fmt(N)} events in ${insertS.toFixed(1)} s (${fmt(N / insertS)}/s)`);

  // the browser's filtered page: app + type, 50 newest below a random cursor
  const pageMs: number[] = [];
  let found = 0;
  for (let i = 0; i < 20; i++) {
    const q = {
      app: appName(Math.floor(rnd() * APPS)),
      type: pick(EVIDENCE_TYPES) as string,
      beforeSeq: 1 + Math.floor(rnd() * N),
      limit: 50,
    };
    t = performance.now();
    found += (await store.list(q)).length;
    pageMs.push(performance.now() - t);
  }
  console.log(
    `filtered page (app + type, limit 50, 20 random cursors): p50 ${pct(pageMs, 50).toFixed(2)} ms, p90 ${pct(pageMs, 90).toFixed(2)} ms, max ${Math.max(...pageMs).toFixed(2)} ms (${found} events)`,
  );

  // export: the route's generator (batched keyset queries, ascending) to a file
  const exportFile = join(dir, 'export.jsonl');
  t = performance.now();
  await pipeline(Readable.from(exportChunks(store, {}, { format: 'jsonl' })), createWriteStream(exportFile));
  const exportS = (performance.now() - t) / 1000;
  const exportRate = N / exportS;

  // reference: a plain SELECT streamed with iterate(), one JSON line per row, to a file
  const refFile = join(dir, 'reference.jsonl');
  t = performance.now();
  async function* plain(): AsyncGenerator<string> {
    let out = '';
    let n = 0;
    for (const r of db.prepare('SELECT * FROM evidence ORDER BY seq').iterate() as IterableIterator<Row>) {
      out += `${JSON.stringify(r)}\n`;
      if (++n % 1000 === 0) {
        yield out;
        out = '';
      }
    }
    if (out) yield out;
  }
  await pipeline(Readable.from(plain()), createWriteStream(refFile));
  const refS = (performance.now() - t) / 1000;
  const refRate = N / refS;
  console.log(
    `export (JSONL, batches of 1000): ${fmt(exportRate)} records/s (${exportS.toFixed(1)} s, ${(statSync(exportFile).size / 1e6).toFixed(0)} MB)`,
  );
  console.log(
    `reference (SELECT * ORDER BY seq, iterate()): ${fmt(refRate)} records/s (${refS.toFixed(1)} s, ${(statSync(refFile).size / 1e6).toFixed(0)} MB)`,
  );
  console.log(`export / reference: ${(exportRate / refRate).toFixed(2)}`);
  await store.close();
}

main()
  .catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
