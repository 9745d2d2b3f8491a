// Starts the real BFF in-process against the sandbox, as the console's own identity (./kubeconfig.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole, type RunningConsole, type StartOptions } from '../../src/server/main.ts';
import { signIn, TEST_PASSWORD_ENV, writeTestAccounts, type Signed } from './auth.ts';
import { SANDBOX_FLAGGER_GATE_ENV, SANDBOX_GIT_ENV } from './bff-process.ts';
import { bffKubeconfig, sandboxForgeEnv } from './kubeconfig.ts';
import { SANDBOX_ENVIRONMENTS_ENV } from './sandbox-environments.ts';

/** For startTestConsole's env: the suites that read release evidence run the release recorder. */
export const RECORDER_ON = { CONSOLE_RELEASE_RECORDER: 'on' } as const;

/** The admin session of each test console (by base URL): plain reads in tests go through it. */
const defaultSessions = new Map<string, Signed>();
export function sessionFor(base: string): Signed | undefined {
  return defaultSessions.get(base);
}

export async function startTestConsole(
  extraEnv: Record<string, string> = {},
  opts: StartOptions & { accounts?: Parameters<typeof writeTestAccounts>[1] } = {},
): Promise<RunningConsole & { dataDir: string; admin: Signed }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'console-data-'));
  await writeTestAccounts(join(dataDir, 'auth.json'), opts.accounts);
  const cfg = loadConfig(
    {
      KUBECONFIG: bffKubeconfig(),
      CONSOLE_PORT: '0',
      CONSOLE_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      // The release recorder renders and dry-runs every app at start and on every commit: about 40 % of a
      // suite's CPU on 2 cores (security.test: 141 s → 84 s without it). Suites that read release evidence
      // turn it on (RECORDER_ON); the others never look at it.
      CONSOLE_RELEASE_RECORDER: 'off',
      ...SANDBOX_GIT_ENV,
      ...SANDBOX_FLAGGER_GATE_ENV,
      ...TEST_PASSWORD_ENV,
      ...SANDBOX_ENVIRONMENTS_ENV,
      ...sandboxForgeEnv(),
      ...extraEnv,
    },
    [],
  );
  const c = await startConsole(cfg, opts);
  // behind a (simulated) proxy the browser's Origin is the public URL's
  const origin = extraEnv.CONSOLE_PUBLIC_URL ? new URL(extraEnv.CONSOLE_PUBLIC_URL).origin : c.url;
  const admin = await signIn(c.url, 'admin', undefined, origin);
  defaultSessions.set(c.url, admin);
  return {
    ...c,
    dataDir,
    admin,
    async close() {
      defaultSessions.delete(c.url);
      await c.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function getJson<T = Record<string, unknown>>(
  base: string,
  path: string,
): Promise<{ status: number; body: T }> {
  const s = sessionFor(base);
  const r = await fetch(base + path, s ? { headers: { Cookie: s.cookie } } : {});
  return { status: r.status, body: (await r.json()) as T };
}

/** Reads SSE messages until `pred` matches one (or times out). */
export async function waitForStreamMessage<T>(base: string, pred: (m: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), timeoutMs);
  try {
    const s = sessionFor(base);
    const res = await fetch(`${base}/api/stream`, {
      signal: ac.signal,
      ...(s ? { headers: { Cookie: s.cookie } } : {}),
    });
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no stream body');
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended');
      buf += dec.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const chunk = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = chunk.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        const m = JSON.parse(data.slice(6)) as T;
        if (pred(m)) {
          ac.abort();
          return m;
        }
      }
    }
  } finally {
    clearTimeout(t);
  }
}

/** fetch with the test console's admin session (found by the URL's origin). */
export function authedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const s = sessionFor(new URL(url).origin);
  return fetch(url, s ? { ...init, headers: { ...(init.headers as Record<string, string>), Cookie: s.cookie } } : init);
}
