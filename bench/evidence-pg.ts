// PostgreSQL evidence verify at scale (issue 27): 1,000,000 hash-chained events (BENCH_EVIDENCE_ROWS to scale
// down) in a private PostgreSQL server (Debian's packages, 127.0.0.1), then `verify()` as the console runs it —
// keyset pages checked and dropped as they are read — against the reference in the same run: the same pages
// all read into memory first, then checked (how verify() worked before). Each runs in a child process of its
// own, which samples its RSS every 20 ms: the peak, the time and the result are printed, and the ratio.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { EVIDENCE_TYPES, type EvidenceEvent } from '../src/domain/evidence.ts';
import { PostgresEvidenceStore } from '../src/server/evidence/postgres-store.ts';
import { verifyStore } from '../src/server/evidence/store-verify.ts';
import { link, type Row } from '../src/server/evidence/store.ts';
import { startPostgres } from '../test/support/postgres.ts';

const N = Number(process.env.BENCH_EVIDENCE_ROWS ?? 1_000_000);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const MiB = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;

/** a child: one way of verifying, its peak RSS sampled */
async function child(mode: string, url: string): Promise<void> {
  let peak = process.memoryUsage().rss;
  const base = peak;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const store = await PostgresEvidenceStore.open(url);
  const t = performance.now();
  let result: { ok: boolean; count: number };
  if (mode === 'streamed') result = await store.verify();
  else {
    // the reference: every page into one array, then the same check
    const c = await store.pool.connect();
    const rows: Row[] = [];
    let last = 0;
    for (;;) {
      const page = (await c.query<Row>('SELECT * FROM evidence WHERE seq > $1 ORDER BY seq LIMIT 5000', [last])).rows;
      rows.push(...page);
      if (page.length < 5000) break;
      last = Number(page[page.length - 1]?.seq);
    }
    const head = (await c.query<{ seq: string; hash: string }>('SELECT seq, hash FROM evidence_head WHERE id = 1'))
      .rows[0];
    c.release();
    result = verifyStore(rows, head ? { seq: Number(head.seq), hash: head.hash } : undefined, []);
  }
  const ms = performance.now() - t;
  peak = Math.max(peak, process.memoryUsage().rss);
  clearInterval(timer);
  await store.close();
  process.stdout.write(JSON.stringify({ mode, ok: result.ok, count: result.count, ms, peak, base }));
}

async function main(): Promise<void> {
  const srv = await startPostgres();
  try {
    const store = await PostgresEvidenceStore.open(srv.url); // creates the schema
    await store.close();
    const pool = new pg.Pool({ connectionString: srv.url, max: 1 });
    let t = performance.now();
    let prev: EvidenceEvent | undefined;
    const start = Date.UTC(2025, 0, 1);
    const BATCH = 1000;
    for (let i = 1; i <= N; i += BATCH) {
      const cols: unknown[][] = [[], [], [], [], [], [], [], [], [], []];
      for (let j = i; j < Math.min(N + 1, i + BATCH); j++) {
        const env = ['dev', 'staging', 'prod'][j % 3] as string;
        const e = link(prev, {
          time: new Date(start + j * 30_000).toISOString(),
          type: EVIDENCE_TYPES[j % EVIDENCE_TYPES.length] as EvidenceEvent['type'],
          actor: `user-${j % 47}`,
          app: `nonprod/flux-system/kustomization/app-${j % 200}`,
          cluster: env === 'prod' ? 'prod' : 'nonprod',
          env,
          data: { revision: `main@sha1:${(j * 2_654_435_761).toString(16).padStart(40, '0')}`, generation: j % 17 },
        });
        const v = [e.seq, e.time, e.type, e.actor, e.app, e.cluster, e.env, JSON.stringify(e.data), e.prevHash, e.hash];
        v.forEach((x, k) => cols[k]?.push(x));
        prev = e;
      }
      await pool.query(
        `INSERT INTO evidence (seq, time, type, actor, app, cluster, env, data, prev_hash, hash)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                              $8::jsonb[], $9::text[], $10::text[])`,
        cols,
      );
    }
    await pool.query(
      'INSERT INTO evidence_head (id, seq, hash) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET seq = $1, hash = $2',
      [prev?.seq, prev?.hash],
    );
    await pool.end();
    const insertS = (performance.now() - t) / 1000;
    console.log(`inserted ${fmt(N)} events into PostgreSQL in ${insertS.toFixed(1)} s (${fmt(N / insertS)}/s)`);

    const run = (mode: string) => {
      t = performance.now();
      const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), mode, srv.url], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
      return JSON.parse(r.stdout) as {
        mode: string;
        ok: boolean;
        count: number;
        ms: number;
        peak: number;
        base: number;
      };
    };
    const streamed = run('streamed');
    const all = run('all-rows');
    for (const r of [streamed, all])
      console.log(
        `verify (${r.mode === 'streamed' ? 'pages checked as read, the console' : 'every row read first, the reference'}): ` +
          `${r.ok ? 'ok' : 'BROKEN'}, ${fmt(r.count)} events in ${(r.ms / 1000).toFixed(1)} s, peak RSS ${MiB(r.peak)} ` +
          `(${MiB(r.peak - r.base)} above its start)`,
      );
    console.log(
      `peak RSS above start: ${MiB(streamed.peak - streamed.base)} vs ${MiB(all.peak - all.base)} = ` +
        `${((streamed.peak - streamed.base) / Math.max(1, all.peak - all.base)).toFixed(2)}× the reference; ` +
        `time ${(streamed.ms / all.ms).toFixed(2)}×`,
    );
    if (!streamed.ok || streamed.count !== N) throw new Error('the streamed verify did not pass the whole chain');
  } finally {
    await srv.stop();
  }
}

const [mode, url] = process.argv.slice(2);
if (mode && url) await child(mode, url);
else await main();
