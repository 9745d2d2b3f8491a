// Evidence export and independent verification, end to end on the real BFF, on SQLite and on PostgreSQL. No cluster
// at all (the console's one context points at a closed port; the bare cluster is not used): events appended through
// the store, the browser's filters and keyset pages, an export through /api/evidence/export verified offline by the
// CLI (exit 0) with its signed trailer, one edited line, events cut from either end and an altered trailer named
// (exit 1), an export narrowed by the reader's grants labelled filtered, and a store rewritten consistently — events
// and hashes, checkpoints copied — caught by the signed checkpoints, both by GET /api/evidence/verify and by the CLI.
// The CLI is always its own process (offline: no database, no server); its runs are independent, so each starts as
// soon as its file is written and they run side by side (CLI_SLOTS at a time), awaited where they are asserted.
// One PostgreSQL server for the file. The spreadsheet-formula export (a real drift) is
// test/integration/evidence-export-formula.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent, EvidenceInput } from '../../src/domain/evidence.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole, type RunningConsole } from '../../src/server/main.ts';
import type { EvidenceStore } from '../../src/server/evidence/store.ts';
import { openEvidenceStore } from '../../src/server/evidence/open-store.ts';
import { as, download, signIn, writeTestAccounts, type Signed } from '../support/auth.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';
import { serverBundle } from '../support/server-bundle.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
// the bundled CLI the image ships (test/support/server-bundle.ts)
const bundle = await serverBundle();
const work = mkdtempSync(join(tmpdir(), 'evidence-export-'));
let pgServer: PgServer | undefined;
afterAll(async () => {
  await pgServer?.stop();
  rmSync(work, { recursive: true, force: true });
});

interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** CLI processes at a time: each is CPU-bound start-up (tsx and the CLI's imports), so one per core. */
const CLI_SLOTS = Math.max(2, availableParallelism());
let busy = 0;
const waiting: Array<() => void> = [];
async function slot<T>(run: () => Promise<T>): Promise<T> {
  if (busy < CLI_SLOTS) busy++;
  else await new Promise<void>((r) => waiting.push(r)); // a finished run hands its slot over
  try {
    return await run();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  }
}

/**
 * The evidence CLI as its own process, awaited (not spawnSync: the consoles under test run in this process, and a
 * blocked event loop let their keep-alive timers close sockets the client was about to reuse: ECONNRESET).
 */
const cliWith = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  slot(
    () =>
      new Promise<CliRun>((resolve, reject) => {
        execFile(
          process.execPath,
          bundle.cliArgs('evidence', ...args),
          // (a CLI run is seconds; on a loaded 2-core machine, with other files running beside this one, far more)
          { cwd: REPO, encoding: 'utf8', timeout: 180_000, env },
          (err, stdout, stderr) => {
            const code = (err as { code?: unknown } | null)?.code;
            if (err && typeof code !== 'number') reject(err);
            else resolve({ status: err ? (code as number) : 0, stdout, stderr });
          },
        );
      }),
  );
const cli = (...args: string[]) => cliWith(process.env, ...args);

const input = (i: number): EvidenceInput => ({
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  type: i % 4 === 0 ? 'drift.detected' : 'app.revision-observed',
  actor: i % 5 === 0 ? 'Alice' : 'kustomize-controller',
  app: `nonprod/flux-system/kustomization/app-${i % 3}`,
  cluster: i % 2 ? 'nonprod' : 'prod',
  env: i % 2 ? 'dev' : 'prod',
  data: {
    revision: `main@sha1:${i.toString(16).padStart(40, '0')}`,
    note: i === 7 ? 'Shipped, "quoted"\nline 2' : 'x',
  },
});

const kubeconfig = (dir: string) => {
  const path = join(dir, 'kubeconfig');
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [{ name: offline, cluster: { server: 'https://127.0.0.1:9' } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: offline, context: { cluster: offline, user: u } }]
current-context: offline
`,
  );
  return path;
};

async function newDatabase(name: string): Promise<string> {
  pgServer ??= await startPostgres();
  const admin = new pg.Client({ connectionString: pgServer.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return pgServer.url.replace(/\/postgres$/, `/${name}`);
}

interface Site {
  dataDir: string;
  databaseUrl?: string;
}

async function start(site: Site, keyFile: string): Promise<RunningConsole & { admin: Signed; auditor: Signed }> {
  await writeTestAccounts(join(site.dataDir, 'auth.json'));
  const cfg = loadConfig(
    {
      KUBECONFIG: kubeconfig(site.dataDir),
      CONSOLE_PORT: '0',
      CONSOLE_DATA_DIR: site.dataDir,
      LOG_LEVEL: 'error',
      ...(site.databaseUrl ? { DATABASE_URL: site.databaseUrl } : {}),
    },
    [],
  );
  process.env.CONSOLE_EVIDENCE_SIGNING_KEY_FILE = keyFile;
  // checkpoints at start and stop only (the counts below), however long a loaded machine takes over the tests
  process.env.CONSOLE_CHECKPOINT_INTERVAL_S = '3600';
  const c = await startConsole(cfg);
  const [admin, auditor] = await Promise.all([signIn(c.url, 'admin'), signIn(c.url, 'auditor')]);
  return { ...c, admin, auditor };
}

async function copyChain(from: EvidenceStore, to: EvidenceStore, change: (e: EvidenceEvent) => EvidenceInput) {
  let after = 0;
  for (;;) {
    const page = await from.list({ afterSeq: after, order: 'asc', limit: 500 });
    for (const e of page) await to.append(change(e));
    if (page.length < 500) return;
    after = page.at(-1)?.seq ?? after;
  }
}

describe.each(['sqlite', 'postgres'] as const)('evidence export and offline verification on %s', (backend) => {
  const dir = join(work, backend);
  const keyFile = join(work, `${backend}-checkpoint.key`);
  const site = async (name: string): Promise<Site> => {
    const dataDir = join(dir, name);
    return backend === 'postgres' ? { dataDir, databaseUrl: await newDatabase(`export_${name}`) } : { dataDir };
  };
  let original: Site;
  let con: Awaited<ReturnType<typeof start>>;
  let open = false; // whether con still runs (a failed test leaves it to afterAll)
  const file = (n: string) => join(dir, n);
  /** writes the file, then starts `cli verify <file> ...args` (awaited where it is asserted) */
  const verify = (name: string, text: string, ...args: string[]) => {
    writeFileSync(file(name), text);
    // without the key an unsigned check is asked for explicitly (issue 40: the CLI refuses it otherwise)
    return cli('verify', file(name), ...args, ...(args.includes('--public-key') ? [] : ['--allow-unsigned']));
  };
  afterAll(async () => {
    if (open) await con.close();
    delete process.env.CONSOLE_EVIDENCE_SIGNING_KEY_FILE;
    delete process.env.CONSOLE_CHECKPOINT_INTERVAL_S;
  });

  it('appended events are browsed with filters and keyset pages, exported, and verify offline', async () => {
    original = await site('original');
    const store = await openEvidenceStore(original);
    for (let i = 1; i <= 60; i++) await store.append(input(i));
    await store.close();
    con = await start(original, keyFile);
    open = true;

    // the browser's filters and pages: newest first, nextCursor until the end
    const seen: number[] = [];
    let cursor: number | null = null;
    do {
      const r = await as(
        con.admin,
        con.url,
        `/api/evidence?env=dev&type=app.revision-observed,drift.detected&limit=7${cursor ? `&before=${cursor}` : ''}`,
      );
      expect(r.status).toBe(200);
      const body = r.body as { events: EvidenceEvent[]; nextCursor: number | null };
      seen.push(...body.events.map((e) => e.seq));
      cursor = body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => 59 - 2 * i));
    const search = await as(
      con.admin,
      con.url,
      `/api/evidence?q=${encodeURIComponent('SHIPPED')}&actor=kustomize-controller`,
    );
    expect((search.body.events as EvidenceEvent[]).map((e) => e.seq)).toEqual([7]);
    const range = await as(
      con.admin,
      con.url,
      `/api/evidence?from=${input(10).time}&to=${input(12).time}&cluster=prod`,
    );
    expect((range.body.events as EvidenceEvent[]).map((e) => e.seq)).toEqual([12, 10]);
    expect((await as(con.admin, con.url, '/api/evidence?from=yesterday')).status).toBe(400);

    // a full export: an attachment, one stored event per line and the signed trailer last, verified offline
    // with no database and no server
    const pubFile = file('public.pem');
    writeFileSync(pubFile, (await download(con.admin, con.url, '/api/evidence/public-key')).text);
    const full = await download(con.admin, con.url, '/api/evidence/export?format=jsonl');
    expect(full.status).toBe(200);
    expect(full.headers.get('content-disposition')).toMatch(/^attachment; filename="evidence-\d.*\.jsonl"$/);
    const lines = full.text.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(62); // ours, console.started, the sign-ins …, the trailer
    expect(JSON.parse(lines[6] ?? '{}')).toMatchObject({ seq: 7, data: { note: 'Shipped, "quoted"\nline 2' } });
    const events = lines.length - 1;
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({
      trailer: 'gitops-console evidence export v1',
      filter: null,
      firstSeq: 1,
      lastSeq: events,
      count: events,
      headSeq: events,
      keyId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const ok = verify('full.jsonl', full.text, '--public-key', pubFile);
    // one edited line; the first event cut, the newest 10 cut, the trailer altered
    const edited = [...lines];
    edited[22] = (edited[22] ?? '').replace('"note":"x"', '"note":"y"');
    const bad = verify('edited.jsonl', `${edited.join('\n')}\n`);
    const tampered = (name: string, l: string[]) => verify(name, `${l.join('\n')}\n`, '--public-key', pubFile);
    const headless = tampered('headless.jsonl', lines.slice(1));
    const tail = tampered('tail.jsonl', [...lines.slice(0, events - 10), lines.at(-1) ?? '']);
    const noTrailer = tampered('no-trailer.jsonl', lines.slice(0, -1));
    const altered = tampered('altered.jsonl', [
      ...lines.slice(0, -1),
      (lines.at(-1) ?? '').replace(/"headSeq":\d+/, '"headSeq":9999'),
    ]);

    // a filtered export: event by event, with the links it could not check; this one starts at event 1, so
    // the CLI takes it for a full export with events missing until told --filtered (it fails closed)
    const dev = await download(
      con.admin,
      con.url,
      '/api/evidence/export?format=jsonl&env=dev&type=drift.detected,app.revision-observed',
    );
    expect(dev.headers.get('content-disposition')).toMatch(/filename="evidence-filtered-.*\.jsonl"/);
    const strict = verify('dev.jsonl', dev.text);
    const filtered = cli('verify', file('dev.jsonl'), '--filtered', '--public-key', pubFile);
    // one event taken out of the filtered export: the trailer's count says so
    const devLines = dev.text.trimEnd().split('\n');
    const devCut = verify(
      'dev-cut.jsonl',
      `${[...devLines.slice(0, 10), ...devLines.slice(11)].join('\n')}\n`,
      '--filtered',
    );

    // CSV: a header, RFC 4180 quoting, data as JSON text
    const csv = await download(
      con.admin,
      con.url,
      '/api/evidence/export?format=csv&app=nonprod/flux-system/kustomization/app-1&env=dev',
    );
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.text.startsWith('seq,time,type,actor,app,cluster,env,data,prevHash,hash\r\n')).toBe(true);
    expect(csv.text).toContain(
      `7,${input(7).time},app.revision-observed,kustomize-controller,nonprod/flux-system/kustomization/app-1,nonprod,dev,"{""revision"":`,
    );
    expect(csv.text).toContain('""note"":""Shipped, \\""quoted\\""\\nline 2""}"');
    const csvOk = verify('app-1.csv', csv.text, '--filtered', '--public-key', pubFile);
    // the full CSV export verifies as the whole chain, and fails with its newest event cut
    const fullCsv = await download(con.admin, con.url, '/api/evidence/export?format=csv');
    const fullCsvOk = verify('full.csv', fullCsv.text, '--public-key', pubFile);
    const rows = fullCsv.text.trimEnd().split('\r\n');
    const csvCut = verify(
      'full-cut.csv',
      `${[...rows.slice(0, -2), rows.at(-1)].join('\r\n')}\r\n`,
      '--public-key',
      pubFile,
    );

    // every CLI run, as started above
    const okRun = await ok;
    expect({ status: okRun.status, stderr: okRun.stderr }).toEqual({ status: 0, stderr: '' });
    expect(okRun.stdout).toMatch(
      new RegExp(
        `^OK: ${events} events, one intact chain from event 1; head [0-9a-f]{64}\\ntrailer: a full export of the chain up to event ${events}, made .*; signature valid \\(key sha256:`,
      ),
    );
    // one edited line: exit 1, the event named
    const badRun = await bad;
    expect(badRun.status).toBe(1);
    expect(badRun.stdout).toContain('BROKEN at event 23: event 23 was changed');
    // the first event cut, the newest 10 cut, the trailer altered: exit 1, each named
    const headlessRun = await headless;
    expect(headlessRun.status).toBe(1);
    expect(headlessRun.stdout).toContain('BROKEN at event 1: event 1 is missing: the file starts at event 2');
    const tailRun = await tail;
    expect(tailRun.status).toBe(1);
    expect(tailRun.stdout).toContain(
      `BROKEN at event ${events - 9}: events ${events - 9}–${events} are missing at the end: the trailer says the export ends at event ${events}`,
    );
    const noTrailerRun = await noTrailer;
    expect(noTrailerRun.status).toBe(1);
    expect(noTrailerRun.stdout).toContain(`BROKEN at event ${events}: no trailer after event ${events}`);
    const alteredRun = await altered;
    expect(alteredRun.status).toBe(1);
    expect(alteredRun.stdout).toContain("the trailer's signature does not verify: the trailer was altered");
    const strictRun = await strict;
    expect(strictRun.status).toBe(1);
    expect(strictRun.stdout).toContain(
      'BROKEN at event 1: a filtered export (its trailer says: env=dev, type=drift.detected,app.revision-observed): verify it with --filtered',
    );
    const filteredRun = await filtered;
    expect(filteredRun.status).toBe(0);
    expect(filteredRun.stdout).toContain('OK: 30 events (events 1–59), each matches its hash; a filtered export');
    expect(filteredRun.stdout).toContain('signature valid');
    expect(filteredRun.stdout).toContain('links not checked (the event before is not in the file): 29: 1→3, 3→5');
    const devCutRun = await devCut;
    expect(devCutRun.status).toBe(1);
    expect(devCutRun.stdout).toContain('the trailer counts 30 events, the file has 29');
    const csvOkRun = await csvOk;
    expect(csvOkRun.stdout).toMatch(/^OK: 10 events \(events 1–55\), each matches its hash; a filtered export/);
    expect(csvOkRun.status).toBe(0);
    expect((await fullCsvOk).status).toBe(0);
    const csvCutRun = await csvCut;
    expect(csvCutRun.status).toBe(1);
    expect(csvCutRun.stdout).toMatch(/^BROKEN at event \d+: event \d+ is missing at the end/);
  }, 600_000);

  it('the export shows a reader only the events of their grants, and says it is filtered', async () => {
    const reviewer = await signIn(con.url, 'dev-reviewer'); // reviewer@nonprod/dev
    const r = await download(reviewer, con.url, '/api/evidence/export?format=jsonl');
    // no query filter, but the reader's grants left events out: never called a full export
    expect(r.headers.get('content-disposition')).toMatch(/filename="evidence-filtered-.*\.jsonl"/);
    const lines = r.text.trimEnd().split('\n');
    const events = lines.slice(0, -1).map((l) => JSON.parse(l) as EvidenceEvent);
    expect(events.length).toBe(30);
    expect(events.every((e) => e.cluster === 'nonprod' && e.env === 'dev')).toBe(true);
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({
      filter: { permissions: ['reviewer@nonprod/dev'] },
      count: 30,
    });
    const strict = verify('reviewer.jsonl', r.text);
    const filtered = cli('verify', file('reviewer.jsonl'), '--filtered', '--allow-unsigned');
    // the auditor (every cluster and environment) gets a full export
    const auditor = await download(con.auditor, con.url, '/api/evidence/export?format=jsonl');
    expect(auditor.headers.get('content-disposition')).toMatch(/filename="evidence-\d/);
    expect(JSON.parse(auditor.text.trimEnd().split('\n').at(-1) ?? '{}')).toMatchObject({ filter: null });
    const page = await as(reviewer, con.url, '/api/evidence?limit=10');
    expect((page.body.events as EvidenceEvent[]).every((e) => e.env === 'dev')).toBe(true);
    expect((await as(await signIn(con.url, 'viewer'), con.url, '/api/evidence/export')).status).toBe(403);
    // the CLI runs started above
    const strictRun = await strict;
    expect(strictRun.status).toBe(1);
    expect(strictRun.stdout).toContain(
      "a filtered export (its trailer says: events outside the reader's grants left out",
    );
    expect((await filtered).status).toBe(0);
  }, 600_000);

  it('signed checkpoints: served with the public key, checked by verify and by the CLI; a rewritten store is caught', async () => {
    const pem = (await download(con.admin, con.url, '/api/evidence/public-key')).text;
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(pem).not.toContain('PRIVATE'); // the private key stays in its file
    expect(readFileSync(keyFile, 'utf8')).toContain('PRIVATE KEY');
    const v = await as(con.auditor, con.url, '/api/evidence/verify');
    expect(v.body).toMatchObject({ ok: true, checkpoints: 1 });
    open = false;
    await con.close(); // signs the head once more
    const pubFile = file('public.pem');
    expect(readFileSync(pubFile, 'utf8')).toBe(pem);
    // `cli evidence public-key` prints the same key from the key file (awaited below, beside the forging)
    const publicKey = cliWith(
      { ...process.env, CONSOLE_DATA_DIR: original.dataDir, CONSOLE_EVIDENCE_SIGNING_KEY_FILE: keyFile },
      'public-key',
    );

    // the whole store rewritten consistently: event 23 changed, every hash after it recomputed, head and
    // checkpoints copied — the chain alone is intact
    const forgedSite = await site('forged');
    const from = await openEvidenceStore(original);
    const forged = await openEvidenceStore(forgedSite);
    await copyChain(from, forged, (e) => ({
      time: e.time,
      type: e.type,
      actor: e.actor,
      app: e.app ?? null,
      cluster: e.cluster ?? null,
      env: e.env ?? null,
      data: e.seq === 23 ? { ...e.data, note: 'rewritten' } : e.data,
    }));
    const cps = (await from.checkpoints?.()) ?? [];
    expect(cps.length).toBeGreaterThanOrEqual(2);
    for (const c of cps) await forged.addCheckpoint?.(c);
    expect((await forged.verify()).ok).toBe(false); // the hashes at the checkpoints differ
    await Promise.all([from.close(), forged.close()]);

    con = await start(forgedSite, keyFile);
    open = true;
    const caught = await as(con.auditor, con.url, '/api/evidence/verify');
    expect(caught.body).toMatchObject({
      ok: false,
      brokenAt: cps[0]?.seq,
      checkpoint: { seq: cps[0]?.seq, time: cps[0]?.time },
      reason: expect.stringContaining('no longer has the hash signed in the checkpoint'),
    });
    const exp = await download(con.admin, con.url, '/api/evidence/export');
    writeFileSync(file('forged.jsonl'), exp.text);
    const checkpoints = await download(con.admin, con.url, '/api/evidence/checkpoints');
    writeFileSync(file('checkpoints.json'), checkpoints.text);
    const withCheckpoints = ['--public-key', pubFile, '--checkpoints', file('checkpoints.json')];
    // without the checkpoints it looks intact (the trailer is signed by the same console key)
    const looksIntact = cli('verify', file('forged.jsonl'), '--public-key', pubFile);
    const r = cli('verify', file('forged.jsonl'), ...withCheckpoints);
    // the original export against the checkpoints up to its head: intact. Against all of them it fails: the chain
    // went on after it was made (the console's stop signed a later head), as it would look had its end been cut
    const fullHead = (
      JSON.parse(readFileSync(file('full.jsonl'), 'utf8').trimEnd().split('\n').at(-1) ?? '{}') as { headSeq: number }
    ).headSeq;
    const allCheckpoints = (JSON.parse(checkpoints.text) as { checkpoints: Array<{ seq: number }> }).checkpoints;
    expect(allCheckpoints.some((c) => c.seq > fullHead)).toBe(true);
    writeFileSync(
      file('checkpoints-to-full.json'),
      JSON.stringify({ checkpoints: allCheckpoints.filter((c) => c.seq <= fullHead) }),
    );
    const good = cli(
      'verify',
      file('full.jsonl'),
      '--public-key',
      pubFile,
      '--checkpoints',
      file('checkpoints-to-full.json'),
    );
    const newer = cli('verify', file('full.jsonl'), ...withCheckpoints);
    open = false;
    await con.close();

    expect((await publicKey).stdout).toBe(pem);
    expect((await looksIntact).status).toBe(0);
    const rRun = await r;
    expect(rRun.status).toBe(1);
    expect(rRun.stdout).toContain(`BROKEN at event ${cps[0]?.seq}: event ${cps[0]?.seq} no longer has the hash signed`);
    const goodRun = await good;
    expect(goodRun.status).toBe(0);
    expect(goodRun.stdout).toMatch(/^signed checkpoints: 1 match$/m);
    const newerRun = await newer;
    expect(newerRun.status).toBe(1);
    expect(newerRun.stdout).toContain(`past the end of this export (event ${fullHead}, the head its trailer names)`);
  }, 600_000);
});
