// npm run bench: prints measured numbers, each with a reference measured in the same run.
//  1. BFF GET /api/apps latency (p50/p99) with 500 extra Kustomizations spread over the sandbox clusters;
//     reference: GET /healthz on the same server (framework + network floor) and a direct LIST of
//     Kustomizations from the kube-apiserver.
//  2. Evidence appends per second on SQLite and PostgreSQL; reference: a plain INSERT of the same rows
//     without the hash chain, on the same backend.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { waitFor } from '../sandbox/procs.ts';
import type { EvidenceInput } from '../src/domain/evidence.ts';
import { PostgresEvidenceStore } from '../src/server/evidence/postgres-store.ts';
import { SqliteEvidenceStore } from '../src/server/evidence/sqlite-store.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { authedFetch, startTestConsole } from '../test/support/console.ts';
import { consoleConnection } from '../test/support/kubeconfig.ts';

const N_APPS = Number(process.env.BENCH_APPS ?? 500);
const N_REQ = Number(process.env.BENCH_REQUESTS ?? 300);
const N_APPEND = Number(process.env.BENCH_APPENDS ?? 2000);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function timeIt(n: number, f: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < 10; i++) await f(); // warm-up
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    out.push(performance.now() - t);
  }
  return out;
}

function benchKustomizations(cluster: string, count: number, offset: number): string {
  const envs = cluster === 'prod' ? ['prod'] : ['dev', 'staging'];
  const items = Array.from({ length: count }, (_, i) => ({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: {
      name: `bench-app-${offset + i}`,
      namespace: 'flux-system',
      labels: { env: envs[i % envs.length], 'gitops-console.dev/bench': 'true' },
    },
    // suspended: listed like any app, without making the sandbox's controllers apply 500 copies
    spec: {
      interval: '10m',
      path: './overlays/dev',
      prune: false,
      suspend: true,
      sourceRef: { kind: 'GitRepository', name: 'digital-human' },
    },
  }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

async function benchApps(): Promise<void> {
  const st = await startSandbox({ reuse: true });
  const names = st.clusters.map((c) => c.name);
  const per = Math.ceil(N_APPS / names.length);
  names.forEach((c, i) =>
    kubectl(c, ['apply', '--server-side', '--field-manager=bench', '-f', '-'], benchKustomizations(c, per, i * per)),
  );
  const con = await startTestConsole();
  try {
    await waitFor(
      `${N_APPS} extra apps listed`,
      async () => {
        const r = (await (await authedFetch(`${con.url}/api/apps`)).json()) as { total: number };
        return r.total >= N_APPS;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const total = ((await (await authedFetch(`${con.url}/api/apps`)).json()) as { total: number }).total;
    const apps = await timeIt(N_REQ, async () => (await authedFetch(`${con.url}/api/apps`)).arrayBuffer());
    const filtered = await timeIt(N_REQ, async () =>
      (await authedFetch(`${con.url}/api/apps?env=prod&q=bench-app-4`)).arrayBuffer(),
    );
    const health = await timeIt(N_REQ, async () => (await fetch(`${con.url}/healthz`)).arrayBuffer());
    const session = await timeIt(N_REQ, async () => (await authedFetch(`${con.url}/api/auth/session`)).arrayBuffer());
    // impersonation: the same list filtered by SubjectAccessReviews for the signed-in user
    for (const c of names)
      kubectl(c, ['create', 'clusterrolebinding', 'bench-admin-view', '--clusterrole=cluster-admin', '--user=admin']);
    const imp = await startTestConsole({ CONSOLE_CLUSTER_ACCESS: 'impersonate' });
    let impCold = 0;
    const impApps: number[] = [];
    let impTotal = 0;
    let svcInterleaved: number[] = [];
    try {
      await waitFor(
        'impersonating console has the apps',
        async () =>
          (
            (await (await authedFetch(`${imp.url}/api/clusters`)).json()) as { clusters: Array<{ status: string }> }
          ).clusters.every((c) => c.status === 'connected'),
        { timeoutMs: 60_000 },
      );
      await waitFor(
        'impersonating console lists the apps',
        async () => {
          const t0 = performance.now();
          impTotal = ((await (await authedFetch(`${imp.url}/api/apps`)).json()) as { total: number }).total;
          impCold = performance.now() - t0;
          return impTotal >= N_APPS;
        },
        { timeoutMs: 120_000, intervalMs: 11_000 },
      );
      // interleaved with the service-mode console, so both see the same machine load
      const svc: number[] = [];
      for (let i = 0; i < N_REQ; i++) {
        let t0 = performance.now();
        await (await authedFetch(`${imp.url}/api/apps`)).arrayBuffer();
        impApps.push(performance.now() - t0);
        t0 = performance.now();
        await (await authedFetch(`${con.url}/api/apps`)).arrayBuffer();
        svc.push(performance.now() - t0);
      }
      svcInterleaved = svc;
    } finally {
      await imp.close();
      for (const c of names) kubectl(c, ['delete', 'clusterrolebinding', 'bench-admin-view', '--ignore-not-found']);
    }
    // the reference LIST as the same identity the BFF runs with (test/support/kubeconfig.ts)
    const conn = consoleConnection(names[0] ?? 'nonprod');
    const list = await timeIt(Math.min(N_REQ, 100), async () =>
      conn.request('GET', '/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations'),
    );
    conn.close();
    const size = (await (await authedFetch(`${con.url}/api/apps`)).arrayBuffer()).byteLength;
    console.log(
      `\n# BFF /api/apps with ${total} apps over ${names.length} clusters (${(size / 1024).toFixed(0)} KiB response), ${N_REQ} sequential requests`,
    );
    console.log(`GET /api/apps                 p50 ${fmt(pct(apps, 50))}  p99 ${fmt(pct(apps, 99))}`);
    console.log(`GET /api/apps?env=&q=         p50 ${fmt(pct(filtered, 50))}  p99 ${fmt(pct(filtered, 99))}`);
    console.log(`reference GET /healthz        p50 ${fmt(pct(health, 50))}  p99 ${fmt(pct(health, 99))}`);
    console.log(
      `GET /api/auth/session (session lookup + access guard) p50 ${fmt(pct(session, 50))}  p99 ${fmt(pct(session, 99))}`,
    );
    console.log(
      `impersonation: GET /api/apps (${impTotal} apps visible) p50 ${fmt(pct(impApps, 50))}  p99 ${fmt(pct(impApps, 99))}; first request after the answer cache expired ${fmt(impCold)}; service mode interleaved p50 ${fmt(pct(svcInterleaved, 50))}, ratio ${(pct(impApps, 50) / pct(svcInterleaved, 50)).toFixed(2)}x`,
    );
    console.log(
      `reference apiserver LIST of ${per} Kustomizations (one cluster) p50 ${fmt(pct(list, 50))}  p99 ${fmt(pct(list, 99))}`,
    );
    console.log(
      `ratio /api/apps p50 vs apiserver LIST p50: ${(pct(apps, 50) / pct(list, 50)).toFixed(2)}x (the BFF answers for all clusters from its cache)`,
    );
  } finally {
    await con.close();
    for (const c of names)
      kubectl(c, [
        '-n',
        'flux-system',
        'delete',
        'kustomizations',
        '-l',
        'gitops-console.dev/bench=true',
        '--wait=false',
      ]);
  }
}

const ev = (i: number): EvidenceInput => ({
  time: new Date().toISOString(),
  type: 'app.revision-observed',
  actor: 'bench',
  app: `bench/flux-system/kustomization/app-${i % 50}`,
  cluster: 'bench',
  env: 'dev',
  data: { revision: `main@sha1:${i.toString(16).padStart(40, '0')}`, i },
});

async function benchEvidence(): Promise<void> {
  console.log(
    `\n# Evidence appends, ${N_APPEND} sequential appends each (hash chain, append-only triggers, head record)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'bench-sqlite-'));
  try {
    const store = SqliteEvidenceStore.open(dir, 'bench.sqlite');
    let t = performance.now();
    for (let i = 0; i < N_APPEND; i++) await store.append(ev(i));
    const chained = N_APPEND / ((performance.now() - t) / 1000);
    const v0 = performance.now();
    const v = await store.verify();
    const verifyMs = performance.now() - v0;
    await store.close();
    const raw = new Database(join(dir, 'raw.sqlite'));
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    raw.exec('CREATE TABLE r (seq INTEGER PRIMARY KEY, data TEXT)');
    const ins = raw.prepare('INSERT INTO r (data) VALUES (?)');
    const tx = raw.transaction((d: string) => ins.run(d));
    t = performance.now();
    for (let i = 0; i < N_APPEND; i++) tx.immediate(JSON.stringify(ev(i)));
    const plain = N_APPEND / ((performance.now() - t) / 1000);
    raw.close();
    console.log(
      `SQLite      ${chained.toFixed(0)} appends/s   reference plain INSERT ${plain.toFixed(0)}/s   ratio ${(chained / plain).toFixed(2)}   verify ${v.count} events in ${fmt(verifyMs)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const server = await startPostgres();
  try {
    const store = await PostgresEvidenceStore.open(server.url);
    let t = performance.now();
    for (let i = 0; i < N_APPEND; i++) await store.append(ev(i));
    const chained = N_APPEND / ((performance.now() - t) / 1000);
    const v0 = performance.now();
    const v = await store.verify();
    const verifyMs = performance.now() - v0;
    await store.close();
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    await c.query('CREATE TABLE r (seq BIGSERIAL PRIMARY KEY, data TEXT)');
    t = performance.now();
    for (let i = 0; i < N_APPEND; i++) await c.query('INSERT INTO r (data) VALUES ($1)', [JSON.stringify(ev(i))]);
    const plain = N_APPEND / ((performance.now() - t) / 1000);
    await c.end();
    console.log(
      `PostgreSQL  ${chained.toFixed(0)} appends/s   reference plain INSERT ${plain.toFixed(0)}/s   ratio ${(chained / plain).toFixed(2)}   verify ${v.count} events in ${fmt(verifyMs)}`,
    );
  } finally {
    await server.stop();
  }
}

const which = process.argv.slice(2);
if (which.length === 0 || which.includes('evidence')) await benchEvidence();
if (which.length === 0 || which.includes('apps')) await benchApps();
process.exit(0);
