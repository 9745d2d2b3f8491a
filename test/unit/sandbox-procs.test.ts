// The sandbox's processes are reaped when they stop (sandbox/procs.ts, sandbox/supervisor.mjs): they are children
// of the sandbox's supervisor, not of the short-lived `sandbox up` that asked for them, so stopping them from
// another short-lived process (`sandbox down`) leaves neither a live process nor a zombie — even where PID 1
// does not reap (many containers). That case is reproduced with a child subreaper that never reaps what it
// adopts, as such a PID 1 (python3's prctl; skipped without python3).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProcess, stopProcess, stopSupervisor, supervisorPid } from '../../sandbox/procs.ts';

const PROCS = join(import.meta.dirname, '..', '..', 'sandbox', 'procs.ts');
const root = mkdtempSync(join(tmpdir(), 'sandbox-procs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** /proc/<pid>/stat: state (R, S, Z, …) and parent, or undefined once the process is gone (reaped). */
function stat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const after = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return { state: after[0] ?? '?', ppid: Number(after[1]) };
  } catch {
    return undefined;
  }
}

async function reapedWithin(recs: Array<{ pid: number }>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (recs.some((r) => stat(r.pid) !== undefined) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

// what the sandbox starts: long-running servers, one of them ignoring SIGTERM (stopped with SIGKILL)
const COMPONENTS: Array<[string, string, string[]]> = [
  ['etcd', '/bin/sleep', ['300']],
  ['kube-apiserver', '/bin/sleep', ['301']],
  ['kube-controller-manager', '/bin/sh', ['-c', 'exec sleep 302']],
  ['stubborn', process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)']],
];

const hasProc = existsSync('/proc/self/stat');
const hasPython = hasProc && spawnSync('python3', ['-c', 'import ctypes'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!hasProc)('sandbox processes', () => {
  it('are children of the supervisor; stopped, each is reaped at once; the supervisor then exits', async () => {
    const dir = mkdtempSync(join(root, 'sandbox-'));
    const env = process.env.GITOPS_SANDBOX_DIR;
    process.env.GITOPS_SANDBOX_DIR = dir;
    try {
      const recs = COMPONENTS.map(([n, bin, args]) => startProcess(n, bin, args, join(dir, `${n}.log`)));
      const sup = supervisorPid();
      expect(sup).toBeGreaterThan(0);
      for (const r of recs) expect(stat(r.pid)).toMatchObject({ ppid: sup });
      await Promise.all(recs.map((r) => stopProcess(r.pid, 1000)));
      // gone from /proc: reaped, not a zombie waiting for anyone. stopProcess returns once the process is dead (a
      // zombie); the supervisor reaps it when its event loop next runs, which under load (the unit tier niced beside
      // the integration tier) was after this check once (2026-12-05): within 2 s, or it never would be
      await reapedWithin(recs, 2000);
      for (const r of recs) expect(stat(r.pid)).toBeUndefined();
      await stopSupervisor();
      expect(supervisorPid()).toBeUndefined();
      await reapedWithin([{ pid: sup ?? 0 }], 2000); // its parent (this process) reaps it
      expect(stat(sup ?? 0)).toBeUndefined();
    } finally {
      if (env === undefined) delete process.env.GITOPS_SANDBOX_DIR;
      else process.env.GITOPS_SANDBOX_DIR = env;
    }
  });

  it('a failed start is an error, as before', () => {
    const dir = mkdtempSync(join(root, 'sandbox-'));
    const env = process.env.GITOPS_SANDBOX_DIR;
    process.env.GITOPS_SANDBOX_DIR = dir;
    try {
      expect(() => startProcess('nothing', join(dir, 'no-such-binary'), [], join(dir, 'x.log'))).toThrow(
        /failed to start nothing/,
      );
    } finally {
      if (env === undefined) delete process.env.GITOPS_SANDBOX_DIR;
      else process.env.GITOPS_SANDBOX_DIR = env;
    }
  });

  // `sandbox up` and `sandbox down` as two short-lived node processes, under a PID 1 that never reaps
  function upDownUnderNonReapingInit(how: 'supervisor' | 'direct'): {
    pids: number[];
    supervisor: number | undefined;
    adopted: Array<{ pid: number; state: string; comm: string }>;
  } {
    const dir = mkdtempSync(join(root, 'sandbox-'));
    const up = `
      import { spawn } from 'node:child_process';
      import { closeSync, openSync } from 'node:fs';
      const { startProcess, supervisorPid } = await import(${JSON.stringify(PROCS)});
      const comps = ${JSON.stringify(COMPONENTS)};
      // "direct": how procs.ts started them before the supervisor (detached children of this process)
      const direct = (n, bin, args) => {
        const fd = openSync(${JSON.stringify(dir)} + '/' + n + '.log', 'a');
        const c = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd] });
        closeSync(fd); c.unref();
        return { pid: c.pid };
      };
      const pids = comps.map(([n, bin, args]) =>
        (${JSON.stringify(how)} === 'direct' ? direct(n, bin, args) : startProcess(n, bin, args, ${JSON.stringify(dir)} + '/' + n + '.log')).pid);
      console.log(JSON.stringify({ pids, supervisor: supervisorPid() }));
      process.exit(0);`;
    const down = `
      const { stopProcess, stopSupervisor } = await import(${JSON.stringify(PROCS)});
      const pids = JSON.parse(process.argv[1]);
      await Promise.all(pids.map((p) => stopProcess(p, 1000)));
      await stopSupervisor();`;
    const harness = `
import ctypes, json, os, subprocess, sys, time
# PR_SET_CHILD_SUBREAPER: orphans below come here, and are never reaped (as by a PID 1 that does not reap)
assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
node, up, down = sys.argv[1], sys.argv[2], sys.argv[3]
ran = subprocess.run([node, '--import', 'tsx', '--input-type=module', '-e', up], capture_output=True, text=True, check=True)
started = json.loads(ran.stdout.strip().splitlines()[-1])
subprocess.run([node, '--import', 'tsx', '--input-type=module', '-e', down, json.dumps(started['pids'])], check=True)
time.sleep(0.5)
adopted = []
for p in os.listdir('/proc'):
    if not p.isdigit(): continue
    try:
        s = open('/proc/%s/stat' % p).read()
    except OSError:
        continue
    comm, rest = s[s.index('(') + 1:s.rindex(')')], s[s.rindex(')') + 2:].split()
    if int(rest[1]) == os.getpid(): adopted.append({'pid': int(p), 'state': rest[0], 'comm': comm})
print(json.dumps({**started, 'adopted': adopted}))
`;
    const out = execFileSync('python3', ['-c', harness, process.execPath, up, down], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, GITOPS_SANDBOX_DIR: dir },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as ReturnType<typeof upDownUnderNonReapingInit>;
  }

  it.skipIf(!hasPython)(
    'started directly by `up` (as before), stopped by `down`: zombies under PID 1',
    () => {
      const r = upDownUnderNonReapingInit('direct');
      const zombies = r.adopted.filter((a) => a.state === 'Z' && r.pids.includes(a.pid));
      expect(zombies).toHaveLength(COMPONENTS.length);
    },
    60_000,
  );

  it.skipIf(!hasPython)(
    'started by the supervisor, stopped by `down`: no component is left, alive or zombie',
    () => {
      const r = upDownUnderNonReapingInit('supervisor');
      for (const pid of r.pids) expect(stat(pid)).toBeUndefined();
      expect(r.adopted.filter((a) => r.pids.includes(a.pid))).toEqual([]);
      // what is left is the supervisor's own exit status, one entry, for the PID 1 that never reaps
      expect(r.adopted).toEqual([{ pid: r.supervisor, state: 'Z', comm: 'node' }]);
    },
    60_000,
  );
});
