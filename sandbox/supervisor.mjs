// The sandbox's supervisor: the parent of every process the sandbox starts, so that each is reaped when it
// stops. The sandbox is started and stopped by short-lived node processes (`sandbox up`, `sandbox down`); a
// process spawned straight from them outlives them, is reparented to PID 1 and, where PID 1 does not reap
// (many containers), stays a zombie once stopped. This long-lived process spawns them as its own children
// instead, and node reaps its children as they exit.
//
//   node sandbox/supervisor.mjs <dir>
//
// <dir>/supervisor.pid   its pid while it takes requests
// <dir>/req/<id>.json    a request ({ name, bin, args, log, env }), written by sandbox/procs.ts's startProcess
// <dir>/res/<id>.json    the answer: { pid } or { error }
// <dir>/stop             a control file: stop every child, then exit (SIGTERM and SIGINT do the same)
//
// Each child is spawned in its own process group (as before: `stopProcess` signals the group by the child's pid)
// with its output appended to its log. With no children and no request for a while the supervisor exits, so a
// stopped sandbox leaves no process behind; the next start starts a new one.
import { spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { clearInterval, setInterval, setTimeout } from 'node:timers';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node supervisor.mjs <dir>\n');
  process.exit(2);
}
const IDLE_MS = Number(process.env.GITOPS_SUPERVISOR_IDLE_MS ?? 3000);
const GRACE_MS = 5000;
const pidFile = join(dir, 'supervisor.pid');
const reqDir = join(dir, 'req');
const resDir = join(dir, 'res');
const stopFile = join(dir, 'stop');
for (const d of [dir, reqDir, resDir]) mkdirSync(d, { recursive: true, mode: 0o700 });

/** pid → name of the children still running */
const children = new Map();
let lastActivity = Date.now();
let stopping = false;

const say = (msg) => process.stdout.write(`[supervisor ${new Date().toISOString()}] ${msg}\n`);

function answer(id, body) {
  const tmp = join(resDir, `.${id}.tmp`);
  writeFileSync(tmp, JSON.stringify(body), { mode: 0o600 });
  renameSync(tmp, join(resDir, `${id}.json`));
}

function start(id, req) {
  let fd;
  try {
    fd = openSync(req.log, 'a');
    const child = spawn(req.bin, req.args, { detached: true, stdio: ['ignore', fd, fd], env: req.env });
    if (child.pid === undefined) {
      // spawn reports ENOENT and the like asynchronously; the pid is missing at once
      child.on('error', () => undefined);
      answer(id, { error: `failed to start ${req.name} (${req.bin})` });
      return;
    }
    const pid = child.pid;
    children.set(pid, req.name);
    child.on('exit', (code, signal) => {
      children.delete(pid);
      lastActivity = Date.now();
      say(`${req.name} (pid ${pid}) exited (${signal ?? code})`);
    });
    say(`started ${req.name} (pid ${pid})`);
    answer(id, { pid });
  } catch (e) {
    answer(id, { error: `failed to start ${req.name} (${req.bin}): ${e instanceof Error ? e.message : String(e)}` });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Takes the waiting requests (a rename claims one: two supervisors never both start it); true if any. */
function serve() {
  let any = false;
  let names = [];
  try {
    names = readdirSync(reqDir).filter((n) => n.endsWith('.json'));
  } catch {
    return false;
  }
  for (const n of names) {
    const id = n.slice(0, -'.json'.length);
    const claimed = join(reqDir, `.${id}.claimed.${process.pid}`);
    try {
      renameSync(join(reqDir, n), claimed);
    } catch {
      continue; // another supervisor took it
    }
    any = true;
    lastActivity = Date.now();
    let req;
    try {
      req = JSON.parse(readFileSync(claimed, 'utf8'));
    } catch (e) {
      answer(id, { error: `unreadable request: ${e instanceof Error ? e.message : String(e)}` });
      continue;
    } finally {
      rmSync(claimed, { force: true });
    }
    if (stopping) answer(id, { error: 'the sandbox supervisor is stopping' });
    else start(id, req);
  }
  return any;
}

function ownPidFile() {
  try {
    return Number(readFileSync(pidFile, 'utf8').trim()) === process.pid;
  } catch {
    return false;
  }
}

function signalGroup(pid, sig) {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      /* gone */
    }
  }
}

/** Stops every child (SIGTERM to its group, SIGKILL after the grace), waits for each to be reaped, exits. */
function stopAll(why) {
  if (stopping) return;
  stopping = true;
  say(`stopping ${children.size} children (${why})`);
  if (ownPidFile()) rmSync(pidFile, { force: true });
  rmSync(stopFile, { force: true });
  for (const pid of children.keys()) signalGroup(pid, 'SIGTERM');
  const killAt = Date.now() + GRACE_MS;
  const t = setInterval(() => {
    serve(); // answers late requests with an error
    if (children.size === 0) {
      clearInterval(t);
      say('every child exited; bye');
      process.exit(0);
    }
    if (Date.now() > killAt) for (const pid of children.keys()) signalGroup(pid, 'SIGKILL');
  }, 50);
}

process.on('SIGTERM', () => stopAll('SIGTERM'));
process.on('SIGINT', () => stopAll('SIGINT'));
process.on('SIGHUP', () => undefined); // its starter's terminal going away is no reason to stop the sandbox

writeFileSync(pidFile, String(process.pid), { mode: 0o600 });
say(`supervising from ${dir}`);

// a request is served as soon as it is written (inotify on req/); the tick is the fallback and looks for the stop
// file and for idleness. At 20 ms it cost the idle sandbox 1.1 core-s a minute; at 200 ms, a tenth of that.
let watcher;
try {
  watcher = watch(reqDir, () => {
    if (!stopping) serve();
  });
} catch {
  /* no inotify here: the tick serves */
}
const tick = setInterval(() => {
  if (stopping) return;
  let stop = false;
  try {
    readFileSync(stopFile);
    stop = true;
  } catch {
    /* no stop file */
  }
  if (stop) return stopAll('stop file');
  serve();
  if (children.size > 0 || Date.now() - lastActivity < IDLE_MS) return;
  // idle: stop taking requests (a starter that finds no supervisor starts a new one), take the last ones
  if (ownPidFile()) rmSync(pidFile, { force: true });
  if (serve()) {
    writeFileSync(pidFile, String(process.pid), { mode: 0o600 });
    return;
  }
  clearInterval(tick);
  watcher?.close();
  say('no children left; bye');
  // a moment for a starter that read the pid file just before it went away to see this process gone
  setTimeout(() => process.exit(0), 10);
}, 200);
