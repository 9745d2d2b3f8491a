// Starts the real BFF in-process against the sandbox kubeconfig.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUBECONFIG_PATH } from '../../sandbox/sandbox.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole, type RunningConsole } from '../../src/server/main.ts';

export async function startTestConsole(
  extraEnv: Record<string, string> = {},
): Promise<RunningConsole & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'console-data-'));
  const cfg = loadConfig(
    { KUBECONFIG: KUBECONFIG_PATH, CONSOLE_PORT: '0', CONSOLE_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extraEnv },
    [],
  );
  const c = await startConsole(cfg);
  return {
    ...c,
    dataDir,
    async close() {
      await c.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function getJson<T = Record<string, unknown>>(
  base: string,
  path: string,
): Promise<{ status: number; body: T }> {
  const r = await fetch(base + path);
  return { status: r.status, body: (await r.json()) as T };
}

/** Reads SSE messages until `pred` matches one (or times out). */
export async function waitForStreamMessage<T>(base: string, pred: (m: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), timeoutMs);
  try {
    const res = await fetch(`${base}/api/stream`, { signal: ac.signal });
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
