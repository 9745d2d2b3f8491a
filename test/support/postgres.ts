// A private PostgreSQL server from Debian's packages, on 127.0.0.1 and a free
// port, data in a temp dir, owned by the `postgres` OS user when we are root
// (initdb refuses to run as root).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort, sleep } from '../../sandbox/procs.ts';

export interface PgServer {
  url: string;
  stop(): Promise<void>;
}

function pgBin(): string {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) throw new Error('PostgreSQL server not installed: apt-get install -y postgresql');
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error('PostgreSQL server not installed: apt-get install -y postgresql');
  return join(root, versions[0], 'bin');
}

/** `pg_ctl` arguments that start the private server on its data directory, port and socket directory. */
export function pgStartArgs(data: string, dir: string, port: string | number): string[] {
  return [
    '-D',
    data,
    '-l',
    join(dir, 'pg.log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    'start',
  ];
}

export async function startPostgres(): Promise<PgServer> {
  const bin = pgBin();
  const dir = mkdtempSync(join(tmpdir(), 'console-pg-'));
  chmodSync(dir, 0o755);
  const asRoot = userInfo().uid === 0;
  const run = (cmd: string, args: string[]) => {
    const full = asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, cmd), ...args] : [join(bin, cmd), ...args];
    const r = spawnSync(full[0] as string, full.slice(1), { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  const data = join(dir, 'data');
  if (asRoot)
    chownSync(
      dir,
      Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
      Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
    );
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'console', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  run('pg_ctl', pgStartArgs(data, dir, port));
  const url = `postgres://console@127.0.0.1:${port}/postgres`;
  return {
    url,
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        /* already stopped */
      }
      await sleep(50);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
