import { execFileSync } from 'node:child_process';

/** Listening TCP sockets of the given pids, from `ss -ltnpH`. */
export function listenersOf(pids: number[]): Array<{ pid: number; process: string; address: string }> {
  const out = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
  const want = new Set(pids);
  const rows: Array<{ pid: number; process: string; address: string }> = [];
  for (const line of out.split('\n')) {
    const cols = line.trim().split(/\s+/);
    const local = cols[3];
    const users = line.slice(line.indexOf('users:'));
    for (const m of users.matchAll(/\("([^"]+)",pid=(\d+)/g)) {
      const pid = Number(m[2]);
      if (want.has(pid) && local) rows.push({ pid, process: m[1] ?? '', address: local });
    }
  }
  return rows;
}
