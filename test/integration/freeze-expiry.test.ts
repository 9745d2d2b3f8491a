// A freeze that expires while the console is down ends at the console's next start, with evidence saying so: on
// a Flux app of the file's own (test/support/freeze-probe.ts), through two console processes on one data
// directory. The freeze lasts 5 s (CONSOLE_FREEZE_MIN_SECONDS lets a test ask for seconds), so the test waits for
// its expiry, not for a minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, writeTestAccounts } from '../support/auth.ts';
import { spawnBff } from '../support/bff-process.ts';
import { startFreezeProbe, type FreezeProbe } from '../support/freeze-probe.ts';
import type { Freeze } from '../support/freeze-sandbox.ts';

type Bff = Awaited<ReturnType<typeof spawnBff>>;

const FREEZE_S = 5;

let probe: FreezeProbe;
let dir: string;
const bffs: Bff[] = [];

const suspended = () => probe.suspended();

/** a console process on the shared data directory (SQLite) */
async function startConsole(name: string): Promise<Bff> {
  const b = await spawnBff(name, {
    env: { CONSOLE_DATA_DIR: dir, CONSOLE_RELEASE_RECORDER: 'off', CONSOLE_FREEZE_MIN_SECONDS: String(FREEZE_S) },
  });
  bffs.push(b);
  return b;
}

const seesProbe = (b: Bff) =>
  waitFor(
    'the console sees the probe app',
    async () => (await as(b.admin, b.base, `/api/apps/${probe.appId}`)).status === 200,
    { timeoutMs: 60_000, intervalMs: 500 },
  );

let c1: Bff;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'freeze-expiry-'));
  await writeTestAccounts(join(dir, 'auth.json'), undefined, true);
  [probe, c1] = await Promise.all([startFreezeProbe('prod', 'prod'), startConsole('freeze-expiry-1')]);
  await seesProbe(c1);
}, 300_000);

afterAll(async () => {
  try {
    for (const b of bffs) await b.stop();
    await probe?.remove();
  } finally {
    for (const b of bffs) rmSync(b.dataDir, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

describe('expiry', () => {
  it('a freeze that expired while the console was down ends at its next start, with evidence saying so', async () => {
    const r = await as(await signIn(c1.base, 'oncall'), c1.base, '/api/freezes', {
      method: 'POST',
      body: { cluster: 'prod', app: probe.appId, reason: 'short freeze', seconds: FREEZE_S },
    });
    expect(r.status, r.text).toBe(200);
    const { id, expiresAt } = (r.body as { freeze: Freeze }).freeze;
    await c1.stop();
    // still frozen: the console went down before the freeze expired (it did not end it on its way out)
    expect(suspended()).toBe(true);
    expect(Date.now()).toBeLessThan(Date.parse(expiresAt));
    await waitFor('the freeze expired while the console was down', async () => Date.now() > Date.parse(expiresAt), {
      timeoutMs: FREEZE_S * 1000 + 5000,
      intervalMs: 250,
    });
    expect(suspended()).toBe(true);
    const c2 = await startConsole('freeze-expiry-2');
    await waitFor('restored at start', async () => !suspended(), { timeoutMs: 60_000 });
    await waitFor('freeze.expired recorded', async () => {
      const ev = (
        (await as(c2.admin, c2.base, '/api/evidence?type=freeze.expired&limit=100')).body as {
          events: EvidenceEvent[];
        }
      ).events;
      return ev.some((e) => e.data.freezeId === id && e.data.expiredWhileConsoleWasDown === true);
    });
    const view = ((await as(c2.admin, c2.base, `/api/freezes/${id}`)).body as { freeze: Freeze }).freeze;
    expect(view).toMatchObject({ status: 'ended', active: false });
  }, 240_000);
});
