// Process bookkeeping for the sandbox: free loopback ports, detached
// processes with log files and pid records, readiness polling, log tails.
//
// The processes are started by the sandbox's supervisor (sandbox/supervisor.mjs), one long-lived process per
// sandbox directory that is their parent and reaps them when they stop: started straight from `sandbox up` (a
// short-lived process) they were reparented to PID 1 and, where PID 1 does not reap, left zombies behind.
// startProcess hands the supervisor a request file and waits (synchronously, as before) for the child's pid.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const SUPERVISOR = join(HERE, 'supervisor.mjs');

/** The supervisor's directory: beside the sandbox's run/ (sandbox/state.ts's SANDBOX_DIR, which imports this). */
export function supervisorDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.GITOPS_SANDBOX_DIR ?? resolve(HERE, '..', '.sandbox'), 'supervisor');
}

/** One bind attempt on 127.0.0.1:`port` (0: any); resolves the port bound, or undefined when it is taken. */
function tryBind(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const got = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(got));
    });
  });
}

/** Below Linux's ephemeral range (32768–60999): ports the kernel never hands out to outgoing connections. */
const LISTEN_RANGE: [number, number] = [20000, 32000];

/**
 * A free port for a server to listen on. Taken from below the ephemeral range: a port the kernel picked for
 * `listen(0)` is an ephemeral one, which an outgoing connection (an apiserver's to etcd) may take before the
 * server that was meant to listen on it starts — seen as etcd's "bind: address already in use" on `up`.
 */
/** Ports this process handed out: free when checked, but not bound until their component starts. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = LISTEN_RANGE[0] + Math.floor(Math.random() * (LISTEN_RANGE[1] - LISTEN_RANGE[0]));
    // a port handed out a moment ago is free until its component binds it: never hand it out twice
    if (handedOut.has(port)) continue;
    const got = await tryBind(port);
    if (got) {
      handedOut.add(got);
      return got;
    }
  }
  const any = await tryBind(0);
  if (!any) throw new Error('no free port on 127.0.0.1');
  return any;
}

export interface ProcRecord {
  name: string;
  pid: number;
  cmd: string[];
  log: string;
  startedAt: string;
}

/** Starts `bin` as a child of the sandbox's supervisor, in its own process group, its output appended to `log`. */
export function startProcess(
  name: string,
  bin: string,
  args: string[],
  log: string,
  env: Record<string, string> = {},
): ProcRecord {
  const dir = supervisorDir();
  for (const d of [dir, join(dir, 'req'), join(dir, 'res')]) mkdirSync(d, { recursive: true, mode: 0o700 });
  const id = randomUUID();
  const req = join(dir, 'req', `${id}.json`);
  const res = join(dir, 'res', `${id}.json`);
  const body = { name, bin, args, log, env: { ...process.env, ...env } };
  writeFileSync(`${req}.tmp`, JSON.stringify(body), { mode: 0o600 });
  renameSync(`${req}.tmp`, req);
  let spawnedAt = 0;
  const until = Date.now() + 20_000;
  for (let i = 0; ; i++) {
    if (existsSync(res)) {
      const answer = JSON.parse(readFileSync(res, 'utf8')) as { pid?: number; error?: string };
      rmSync(res, { force: true });
      if (!answer.pid) throw new Error(answer.error ?? `failed to start ${name} (${bin})`);
      return { name, pid: answer.pid, cmd: [bin, ...args], log, startedAt: new Date().toISOString() };
    }
    // no supervisor (none yet, or the last one went idle): start one; it takes the waiting request
    if (i % 20 === 0 && !supervisorPid(dir) && Date.now() - spawnedAt > 2_000) {
      spawnSupervisor(dir);
      spawnedAt = Date.now();
    }
    if (Date.now() > until) {
      rmSync(req, { force: true });
      throw new Error(
        `failed to start ${name}: the sandbox supervisor did not answer (${join(dir, 'supervisor.log')})`,
      );
    }
    sleepSync(5);
  }
}

/** The running supervisor's pid, if there is one taking requests. */
export function supervisorPid(dir = supervisorDir()): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'supervisor.pid'), 'utf8').trim());
    if (!(pid > 0) || !alive(pid)) return undefined;
    // a pid file left by a killed supervisor may name a reused pid
    const cmdline = `/proc/${pid}/cmdline`;
    return !existsSync(cmdline) || readFileSync(cmdline, 'utf8').includes('supervisor.mjs') ? pid : undefined;
  } catch {
    return undefined;
  }
}

function spawnSupervisor(dir: string): void {
  const fd = openSync(join(dir, 'supervisor.log'), 'a');
  try {
    const child = spawn(process.execPath, [SUPERVISOR, dir], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: process.env,
    });
    child.on('error', () => undefined);
    child.unref();
  } finally {
    closeSync(fd);
  }
}

/**
 * Stops the sandbox's supervisor and whatever it still runs (each child is stopped and reaped first), and waits
 * until it is gone. Nothing to do when none runs (it exits by itself once its children have stopped).
 */
export async function stopSupervisor(dir = supervisorDir(), timeoutMs = 20_000): Promise<void> {
  const pid = supervisorPid(dir);
  if (!pid) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const until = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > until)
      throw new Error(`the sandbox supervisor (pid ${pid}) did not stop in ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
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

/**
 * `check` holds at every look (each `intervalMs`, 500 ms by default) for `ms`: for "nothing happens meanwhile"
 * (a gate stays closed, a follower stays a follower). Fails at the first look that does not hold, saying what
 * and after how long; never one long sleep.
 */
export async function holdsFor(
  what: string,
  ms: number,
  check: () => Promise<boolean> | boolean,
  opts: { intervalMs?: number } = {},
): Promise<void> {
  const t0 = Date.now();
  const until = t0 + ms;
  do {
    if (!(await check())) throw new Error(`${what} stopped holding after ${Date.now() - t0} ms (of ${ms} ms)`);
    await sleep(Math.min(opts.intervalMs ?? 500, 2_000));
  } while (Date.now() < until);
  if (!(await check())) throw new Error(`${what} stopped holding at the end of ${ms} ms`);
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
