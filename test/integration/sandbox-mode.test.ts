// Issue #23: what a newcomer runs (`npm start`, sandbox mode) is what we ship — the console's own
// least-privilege identity, never the sandbox admin — and a release's chain is complete from the first start
// (the sandbox's business endpoints are its verification checks).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { CONSOLE_KUBECONFIG_PATH, mustState } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole, type RunningConsole } from '../../src/server/main.ts';
import { as, signIn, writeTestAccounts, type Signed } from '../support/auth.ts';
import { consoleConnection } from '../support/kubeconfig.ts';

let con: RunningConsole;
let admin: Signed;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'console-sandbox-mode-'));
  await writeTestAccounts(join(dataDir, 'auth.json'));
  // exactly `npm start`'s mode: no kubeconfig, no Git hosts, no checks, no registry, no forge token given
  con = await startConsole(
    loadConfig({ CONSOLE_SANDBOX: '1', CONSOLE_PORT: '0', CONSOLE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, []),
  );
  admin = await signIn(con.url, 'admin');
}, 180_000);

afterAll(async () => {
  await con?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('sandbox mode (npm start)', () => {
  it("connects as the console's least-privilege identity, which may not read Secrets", async () => {
    expect(con.kubeconfig).toBe(CONSOLE_KUBECONFIG_PATH);
    const conn = consoleConnection('nonprod');
    try {
      const r = await conn.request('GET', '/api/v1/namespaces/dev/secrets', { timeoutMs: 10_000 });
      expect(r.status).toBe(403);
    } finally {
      conn.close();
    }
  });

  it("verifies each release against the sandbox's business endpoint (the chain is complete)", async () => {
    let seen: EvidenceEvent | undefined;
    await waitFor(
      'a release.verification of dev by an HTTP check',
      async () => {
        // dev's Kustomization (dev holds a HelmRelease too, whose Git names no image to resolve)
        const r = await as(
          admin,
          con.url,
          `/api/evidence?type=release.verification&app=${encodeURIComponent('nonprod/flux-system/kustomization/digital-human-dev')}`,
        );
        seen = (r.body.events as EvidenceEvent[]).find((e) => (e.data as { http?: { url?: string } }).http?.url);
        return !!seen;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    // the check of dev's business endpoint, as the sandbox lists it, answered
    const st = mustState() as unknown as {
      business: { endpoints: Record<string, { url: string }> };
    };
    expect(seen?.data).toMatchObject({
      http: { url: st.business.endpoints.dev?.url, status: 200, ok: true },
    });
    // tags resolve through the sandbox's registry: Git's images carry digests
    const digests = (seen?.data as { gitDigests?: Array<{ digest: string | null }> }).gitDigests ?? [];
    expect(digests.length).toBeGreaterThan(0);
    expect(digests.every((d) => d.digest?.startsWith('sha256:'))).toBe(true);
  });
});
