// e2e: the real sandbox (reused if up), the built SPA, and the BFF as its own process.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUBECONFIG_PATH, REPO_ROOT, startSandbox } from '../sandbox/sandbox.ts';
import { freePort, waitFor } from '../sandbox/procs.ts';

export default async function globalSetup(): Promise<() => Promise<void>> {
  await startSandbox({ reuse: true });
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'console-e2e-'));
  const log = join(dataDir, 'bff.log');
  const fd = openSync(log, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/server/main.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      KUBECONFIG: KUBECONFIG_PATH,
      CONSOLE_PORT: String(port),
      CONSOLE_DATA_DIR: dataDir,
      CONSOLE_STATIC_DIR: join(REPO_ROOT, 'dist/web'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', fd, fd],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor('BFF /readyz', async () => (await fetch(`${base}/readyz`)).status === 200, {
    timeoutMs: 60_000,
    proc: { name: 'bff', pid: child.pid ?? 0, cmd: [], log, startedAt: '' },
  });
  process.env.E2E_BASE_URL = base;
  process.env.E2E_BFF_LOG = log;
  return async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
}
