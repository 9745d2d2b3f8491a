// The BFF as its own process against the sandbox (e2e, benchmarks), and the Chromium flags this machine needs.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { signIn, TEST_PASSWORD_ENV, writeTestAccounts, type Signed } from './auth.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../sandbox/sandbox.ts';
import { freePort, waitFor } from '../../sandbox/procs.ts';
import { bffKubeconfig, sandboxForgeEnv } from './kubeconfig.ts';
import { SANDBOX_ENVIRONMENTS_ENV } from './sandbox-environments.ts';
import { serverBundle } from './server-bundle.ts';

/**
 * The Git URL policy's allow-list for a console under test (src/server/git/url-policy.ts): the sandbox's forge,
 * its Flux artifact servers and the tests' own Git and forge stand-ins all listen on 127.0.0.1. Only that address
 * is allowed — `localhost`, other loopback addresses, private and metadata addresses are still refused.
 */
export const SANDBOX_GIT_ENV = { CONSOLE_GIT_ALLOW_HOSTS: '127.0.0.1' } as const;

/**
 * The Flagger load tester hosts a console under test may open gates on (src/server/apps/flagger-gate.ts): the
 * sandbox's business endpoints and the tests' own stand-ins (./business-standin.ts) serve the gates on 127.0.0.1,
 * each on a port of its own, so the address is allowed on every port.
 */
export const SANDBOX_FLAGGER_GATE_ENV = { CONSOLE_FLAGGER_GATE_HOSTS: '127.0.0.1' } as const;

/**
 * The browser the e2e tests drive: Debian's `chromium-headless-shell` where installed (`.ci/run` installs it), else
 * Debian's `/usr/bin/chromium`; `E2E_CHROMIUM` names another. Both are the same Chromium build (same Blink and V8);
 * the shell has no browser UI or display compositor, which the full browser's headless mode still runs: on the same
 * pages and axe audits it used 12–16 s of CPU where the full browser used 23–25 s, and loaded each page in half
 * the time (docs/develop/testing.md, "The browser"). Benchmarks and screenshots keep the full browser users run.
 */
export const E2E_CHROMIUM =
  process.env.E2E_CHROMIUM ??
  (existsSync('/usr/bin/chromium-headless-shell') ? '/usr/bin/chromium-headless-shell' : '/usr/bin/chromium');

/** Debian chromium, headless, no sandbox (root), and no background traffic to the closed network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The BFF with the test accounts (test/support/auth.ts), signed in as admin: `storageState` is a
 * Playwright storage-state file holding that session's cookie, for browsers that start signed in.
 */
export async function spawnBff(
  prefix: string,
  opts: {
    env?: Record<string, string>;
    accounts?: Parameters<typeof writeTestAccounts>[1];
    /** CONSOLE_PUBLIC_URL set to the BFF's own address (links in what it sends out) */
    publicUrl?: boolean;
    /** node's own flags before the console's (e.g. `--import` of a test preload: test/chaos/clock-skew.mjs) */
    nodeArgs?: string[];
    /**
     * its output through a pipe, written to the log by this process: a console whose own file writes are refused
     * (test/chaos's disk-full: RLIMIT_FSIZE 0) would die writing its log to a file
     */
    pipeLog?: boolean;
  } = {},
): Promise<{
  base: string;
  log: string;
  child: ChildProcess;
  dataDir: string;
  admin: Signed;
  storageState: string;
  stop(): Promise<void>;
}> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const log = join(dataDir, 'bff.log');
  // BFF processes stand for replicas: one auth.json, account ids included, as an admin ships it to each
  await writeTestAccounts(join(dataDir, 'auth.json'), opts.accounts, true);
  const fd = openSync(log, 'a');
  // the bundled console the image runs; a console in sandbox mode imports the sandbox's code, which the bundle leaves
  // out, so it starts from the sources through tsx
  const args =
    opts.env?.CONSOLE_SANDBOX === '1'
      ? ['--import', 'tsx', join(REPO_ROOT, 'src/server/main.ts')]
      : (await serverBundle()).consoleArgs();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      KUBECONFIG: bffKubeconfig(),
      CONSOLE_PORT: String(port),
      CONSOLE_DATA_DIR: dataDir,
      CONSOLE_STATIC_DIR: join(REPO_ROOT, 'dist/web'),
      LOG_LEVEL: 'warn',
      ...(opts.publicUrl ? { CONSOLE_PUBLIC_URL: `http://127.0.0.1:${port}` } : {}),
      ...SANDBOX_GIT_ENV,
      ...SANDBOX_FLAGGER_GATE_ENV,
      ...TEST_PASSWORD_ENV,
      ...SANDBOX_ENVIRONMENTS_ENV,
      ...sandboxForgeEnv(),
      ...opts.env,
    },
    stdio: opts.pipeLog ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
  });
  if (opts.pipeLog) for (const out of [child.stdout, child.stderr]) out?.on('data', (d: Buffer) => writeSync(fd, d));
  const base = `http://127.0.0.1:${port}`;
  // a BFF starting beside other test files' BFFs on two cores may take minutes to list both clusters; a child
  // that never became ready is killed, not left to hold its port and informers for the rest of the run
  try {
    await waitFor('BFF /readyz', async () => (await fetch(`${base}/readyz`)).status === 200, {
      timeoutMs: 180_000,
      proc: { name: 'bff', pid: child.pid ?? 0, cmd: [], log, startedAt: '' },
    });
  } catch (err) {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw err;
  }
  const admin = await signIn(base, 'admin');
  const storageState = join(dataDir, 'storage-admin.json');
  writeFileSync(storageState, JSON.stringify(storageStateFor(admin)));
  return {
    base,
    log,
    child,
    dataDir,
    admin,
    storageState,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** A Playwright storage state with one session cookie for 127.0.0.1. */
export function storageStateFor(s: Signed) {
  const [name = '', value = ''] = s.cookie.split('=');
  return {
    cookies: [
      { name, value, domain: '127.0.0.1', path: '/', expires: -1, httpOnly: true, secure: false, sameSite: 'Strict' },
    ],
    origins: [],
  };
}
