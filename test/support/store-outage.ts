// Evidence stores that really fail mid-run, and come back (test/contract/evidence-fail-closed.test.ts).
//
// SQLite: the BFF runs as its own process and the kernel refuses every file write it makes — `prlimit` lowers
// the process's RLIMIT_FSIZE (soft) to 0, so each write(2) to a regular file fails with EFBIG (Node ignores
// SIGXFSZ) and SQLite reports SQLITE_IOERR_WRITE, exactly as on a full disk or quota. Unlike `chmod 0444`
// this works as root (CI runs as root; root ignores file modes, and a mode change never affects a file that
// is already open anyway) and needs no mount privileges. Reads keep working. Raising the soft limit back
// (always allowed) lets the same connection write again. The BFF's log goes to a pipe, not a file, so logging
// keeps working while its files cannot be written.
//
// PostgreSQL: the private server of ./postgres.ts is stopped with `pg_ctl stop -m fast` (connections are
// cut, new ones refused) and started again with the same port and socket directory.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { freePort, waitFor } from '../../sandbox/procs.ts';
import { REPO_ROOT } from '../../sandbox/state.ts';
import { writeTestAccounts } from './auth.ts';
import { pgStartArgs } from './postgres.ts';
import { bffKubeconfig } from './kubeconfig.ts';
import { serverBundle } from './server-bundle.ts';

/** The BFF as its own process with its output in memory (a log file could not be written during an outage). */
export async function spawnBffPiped(env: Record<string, string> = {}): Promise<{
  base: string;
  pid: number;
  dataDir: string;
  output: () => string;
  stop(): Promise<void>;
}> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'console-outage-'));
  await writeTestAccounts(join(dataDir, 'auth.json'));
  let out = '';
  const child: ChildProcess = spawn(process.execPath, (await serverBundle()).consoleArgs(), {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      KUBECONFIG: bffKubeconfig(),
      CONSOLE_PORT: String(port),
      CONSOLE_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const collect = (d: Buffer) => {
    out = (out + d.toString('utf8')).slice(-200_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'BFF /readyz',
      async () => {
        if (child.exitCode !== null) throw new Error(`BFF exited ${child.exitCode}:\n${out.slice(-3000)}`);
        return (await fetch(`${base}/readyz`)).status === 200;
      },
      // its start (then through tsx) niced beside the integration tier at load ~10 took over 90 s once in CI
      // (2026-12-05); a BFF that exits or hangs still fails here
      { timeoutMs: 240_000 },
    );
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return {
    base,
    pid: child.pid ?? 0,
    dataDir,
    output: () => out,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** From now on every write the process makes to a regular file fails (EFBIG): a full disk, for that process. */
export function denyFileWrites(pid: number): void {
  execFileSync('prlimit', ['--pid', String(pid), '--fsize=0:']);
}

/** Lifts `denyFileWrites` (the soft limit goes back up to the hard one). */
export function allowFileWrites(pid: number): void {
  execFileSync('prlimit', ['--pid', String(pid), '--fsize=unlimited:']);
}

function pgCtl(args: string[]): void {
  const root = '/usr/lib/postgresql';
  const v = readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))[0];
  if (!v) throw new Error('pg_ctl not found');
  const bin = join(root, v, 'bin', 'pg_ctl');
  const full = userInfo().uid === 0 ? ['runuser', '-u', 'postgres', '--', bin, ...args] : [bin, ...args];
  const r = spawnSync(full[0] as string, full.slice(1), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pg_ctl ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
}

/** Stop and start again a server started by ./postgres.ts (same data, port and socket directory). */
export async function postgresControl(url: string): Promise<{ stop(): void; start(): void }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const data = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]?.data_directory;
  await client.end();
  if (!data) throw new Error('no data_directory');
  const dir = dirname(data);
  const port = new URL(url).port;
  return {
    stop: () => pgCtl(['-D', data, '-m', 'fast', '-w', 'stop']),
    start: () => {
      // a server still shutting down (its lock file and socket not gone yet) makes a start fail: tried again
      for (let i = 0; ; i++)
        try {
          return pgCtl(pgStartArgs(data, dir, port));
        } catch (e) {
          if (i >= 10 || !/another server might be running|lock file|already in use/i.test(String(e))) throw e;
          spawnSync('sleep', ['1']);
        }
    },
  };
}
