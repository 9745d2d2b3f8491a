// The guided "Try it" page's API against the real sandbox: a console in sandbox mode (CONSOLE_SANDBOX=1, reusing
// the running sandbox) refuses a viewer and a signed-out caller, refuses the freeze card without a freeze, and runs
// one job at a time ("Take a cluster offline", then prod's apiserver is started again). A console on a kubeconfig
// has no /api/tryit at all (404). The journeys (each card's story, its evidence, intent first, and the reset to the
// seed) are e2e/tryit.spec.ts's: a person runs them in the browser, and the spec checks the same records from
// outside (Git, kubectl, the evidence API); running them here as well cost the serial tier 53 s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TryItJob } from '../../src/api/tryit.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole, type RunningConsole } from '../../src/server/main.ts';
import { startApiserver } from '../../sandbox/sandbox.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, writeTestAccounts, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';

let sandboxConsole: RunningConsole;
let dataDir = '';
let developer: Signed;
let admin: Signed;
let viewer: Signed;
const base = () => sandboxConsole.url;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'console-tryit-'));
  await writeTestAccounts(join(dataDir, 'auth.json'));
  const cfg = loadConfig(
    {
      CONSOLE_SANDBOX: '1',
      CONSOLE_PORT: '0',
      CONSOLE_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      // the releases are not this test's subject: the recorder would only add load
      CONSOLE_RELEASE_RECORDER: 'off',
    },
    [],
  );
  // sandbox mode reuses the running, healthy sandbox (startSandbox({ reuse: true }))
  sandboxConsole = await startConsole(cfg);
  await waitFor('the sandbox console ready', async () => (await fetch(`${base()}/readyz`)).status === 200, {
    timeoutMs: 60_000,
  });
  [developer, admin, viewer] = await Promise.all([
    signIn(base(), 'developer'),
    signIn(base(), 'admin'),
    signIn(base(), 'viewer'),
  ]);
}, 180_000);

afterAll(async () => {
  // "Take a cluster offline" stopped prod's apiserver: the next file finds it up (the reset does this in e2e)
  await startApiserver('prod');
  await sandboxConsole?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function finished(jobId: string, timeoutMs = 300_000): Promise<TryItJob> {
  let job: TryItJob | undefined;
  await waitFor(
    `try-it job ${jobId} to end`,
    async () => {
      job = (await as(developer, base(), `/api/tryit/jobs/${jobId}`)).body.job as TryItJob;
      return job.state !== 'running';
    },
    { timeoutMs, intervalMs: 1000 },
  );
  return job as TryItJob;
}

describe('Try it (a console in sandbox mode)', () => {
  it('lists the cards to any signed-in user; a viewer may not run them (403), nobody signed out (401)', async () => {
    const r = await as(viewer, base(), '/api/tryit/scenarios');
    expect(r.status).toBe(200);
    expect((r.body.scenarios as Array<{ id: string }>).map((s) => s.id)).toEqual([
      'scale-by-hand',
      'remove-configmap',
      'empty-render',
      'freeze-incident',
      'break-prod-endpoint',
      'push-image',
      'cluster-offline',
    ]);
    expect(r.body.canRun).toBe(false);
    expect((await as(developer, base(), '/api/tryit/scenarios')).body.canRun).toBe(true);
    expect((await as(viewer, base(), '/api/tryit/scenarios/scale-by-hand/run', { method: 'POST' })).status).toBe(403);
    expect((await as(viewer, base(), '/api/tryit/reset', { method: 'POST' })).status).toBe(403);
    expect((await fetch(`${base()}/api/tryit/scenarios`)).status).toBe(401);
  });

  it('the freeze card without a freeze on prod: 409 saying what to do first, nothing recorded', async () => {
    const r = await as(developer, base(), '/api/tryit/scenarios/freeze-incident/run', { method: 'POST' });
    expect(r.status).toBe(409);
    expect(r.text).toMatch(/freeze digital-human-prod first/);
    const ev = await as(admin, base(), '/api/evidence?type=sandbox.scenario&q=freeze-incident');
    expect(ev.body.events).toEqual([]);
  });

  it('"Take a cluster offline" stops prod\'s apiserver (the console sees it lost); a second run meanwhile is 409', async () => {
    const started = await as(developer, base(), '/api/tryit/scenarios/cluster-offline/run', { method: 'POST' });
    expect(started.status).toBe(202);
    // one at a time
    const again = await as(admin, base(), '/api/tryit/reset', { method: 'POST' });
    expect([409, 202]).toContain(again.status); // 202 only when the stop was already done (it is quick)
    const job = await finished((started.body.job as TryItJob).id);
    expect(job.state).toBe('done');
    if (again.status === 202) await finished((again.body.job as TryItJob).id);
    else
      await waitFor(
        'the console to see prod unreachable',
        async () => {
          const c = (await as(admin, base(), '/api/clusters')).body.clusters as Array<{ name: string; status: string }>;
          return c.find((x) => x.name === 'prod')?.status !== 'connected';
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
  }, 120_000);
});

describe('Try it outside sandbox mode', () => {
  it('a console started on a kubeconfig answers 404 on every /api/tryit route', async () => {
    const c = await startTestConsole();
    try {
      for (const [method, path] of [
        ['GET', '/api/tryit/scenarios'],
        ['POST', '/api/tryit/scenarios/scale-by-hand/run'],
        ['POST', '/api/tryit/reset'],
        ['GET', '/api/tryit/jobs/try-01234567'],
      ] as const) {
        // as the SPA sends it (X-Console-Request): the catch-all is public, and a public POST needs the header
        const r = await as(c.admin, c.url, path, { method, headers: { 'X-Console-Request': '1' } });
        expect(r.status, `${method} ${path}`).toBe(404);
      }
    } finally {
      await c.close();
    }
  }, 120_000);
});
