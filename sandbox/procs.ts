// Process bookkeeping for the sandbox: free loopback ports, detached
// processes with log files and pid records, readiness polling, log tails.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface ProcRecord {
  name: string;
  pid: number;
  cmd: string[];
  log: string;
  startedAt: string;
}

export function startProcess(
  name: string,
  bin: string,
  args: string[],
  log: string,
  env: Record<string, string> = {},
): ProcRecord {
  const fd = openSync(log, 'a');
  const child = spawn(bin, args, {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, ...env },
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`failed to start ${name} (${bin})`);
  child.unref();
  return { name, pid: child.pid, cmd: [bin, ...args], log, startedAt: new Date().toISOString() };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // a zombie still answers kill(0); look at /proc where it exists
    const stat = `/proc/${pid}/stat`;
    if (existsSync(stat)) {
      const state = readFileSync(stat, 'utf8').split(') ')[1]?.[0];
      return state !== 'Z';
    }
    return true;
  } catch {
    return false;
  }
}

export async function stopProcess(pid: number, graceMs = 5000): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
  }
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    if (!alive(pid)) return;
    await sleep(100);
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  // SIGKILL is asynchronous: a big process can take a while to be torn down,
  // and a caller that restarts it must not see the old one as still running
  const killedBy = Date.now() + 15_000;
  while (alive(pid)) {
    if (Date.now() > killedBy) throw new Error(`process ${pid} survived SIGKILL for 15 s`);
    await sleep(50);
  }
}

export function tail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log)';
  const size = statSync(file).size;
  const text = readFileSync(file, 'utf8').slice(size > 200_000 ? size - 200_000 : 0);
  return text.split('\n').slice(-lines).join('\n');
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ComponentCrashed extends Error {
  constructor(
    readonly component: string,
    readonly logTail: string,
  ) {
    super(`sandbox component ${component} exited; last log lines:\n${logTail}`);
  }
}

/** Polls `check` until it returns true; fails early if the process died. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs?: number; intervalMs?: number; proc?: ProcRecord } = {},
): Promise<void> {
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastErr = '';
  while (Date.now() < until) {
    if (opts.proc && !alive(opts.proc.pid)) {
      throw new ComponentCrashed(opts.proc.name, tail(opts.proc.log));
    }
    try {
      if (await check()) return;
    } catch (e) {
      lastErr = e instanceof Error ? e.message : String(e);
    }
    await sleep(opts.intervalMs ?? 250);
  }
  const logTail = opts.proc ? `\n${tail(opts.proc.log)}` : '';
  throw new Error(`timed out waiting for ${what}${lastErr ? ` (${lastErr})` : ''}${logTail}`);
}
