// The guided "Try it" page's API against the real sandbox: a console in sandbox mode (CONSOLE_SANDBOX=1, reusing
// the running sandbox) runs "Scale a Deployment by hand" (drift recorded, then reverted by Flux) and "Take a
// cluster offline", refuses the freeze card without a freeze, refuses a viewer, and resets the sandbox to its
// seed (Git's tree is the seed's, prod's apiserver answers, every Kustomization at the reset commit); each run
// is evidence, intent first, actor `sandbox-scenario`, the person in the data. A console on a kubeconfig has no
// /api/tryit at all (404).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TryItJob } from '../../src/api/tryit.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startConsole, type RunningConsole } from '../../src/server/main.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import { getJson, readRepoFile, repoHead } from '../../sandbox/scenario.ts';
import { seedFiles } from '../../sandbox/seed.ts';
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

async function run(path: string, who = developer): Promise<TryItJob> {
  const r = await as(who, base(), path, { method: 'POST' });
  expect(r.status, r.text).toBe(202);
  const job = r.body.job as TryItJob;
  expect(job.state).toBe('running');
  return finished(job.id);
}

async function evidenceOf(job: TryItJob) {
  const r = await as(admin, base(), `/api/evidence?q=${job.id}&limit=20`);
  expect(r.status).toBe(200);
  return (r.body.events as Array<{ seq: number; type: string; actor: string; data: Record<string, unknown> }>).sort(
    (a, b) => a.seq - b.seq,
  );
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

  it('"Scale a Deployment by hand": the drift is recorded, then Flux reverts it; the run is evidence, intent first', async () => {
    const job = await run('/api/tryit/scenarios/scale-by-hand/run');
    expect(job.error).toBeUndefined();
    expect(job.state).toBe('done');
    expect(job.steps.map((s) => s.state)).toEqual(['done', 'done', 'done']);
    expect(job.links[0]?.href).toBe('/apps/nonprod/flux-system/kustomization/digital-human-dev?tq=tts-gateway');
    // the console's own records of the story: the episode opened by kubectl and closed
    const drift = await as(
      admin,
      base(),
      `/api/evidence?type=drift.detected,drift.reverted&app=nonprod/flux-system/kustomization/digital-human-dev&from=${encodeURIComponent(job.startedAt)}`,
    );
    const types = (drift.body.events as Array<{ type: string; data: { object?: string } }>)
      .filter((e) => String(e.data.object).includes('tts-gateway'))
      .map((e) => e.type);
    expect(types).toContain('drift.detected');
    expect(types).toContain('drift.reverted');
    // the run itself: the intent (actor sandbox-scenario, the person in the data), then its outcome
    const [intent, outcome] = await evidenceOf(job);
    expect(intent).toMatchObject({
      seq: job.intentSeq,
      type: 'sandbox.scenario',
      actor: 'sandbox-scenario',
      data: { by: 'developer', scenario: 'scale-by-hand', job: job.id },
    });
    expect(outcome).toMatchObject({
      type: 'action.completed',
      actor: 'sandbox-scenario',
      data: { action: 'sandbox.scenario', intentSeq: job.intentSeq, by: 'developer' },
    });
  }, 240_000);

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

  it('reset: endpoints ok, every apiserver up, Git is the seed again, Flux at the reset commit everywhere', async () => {
    const job = await run('/api/tryit/reset', admin);
    expect(job.error).toBeUndefined();
    expect(job.state).toBe('done');
    expect(job.steps.map((s) => s.state)).toEqual(['done', 'done', 'done', 'done', 'done']);
    const head = repoHead();
    expect(job.steps[3]?.detail).toBe(head.slice(0, 7));
    for (const [path, content] of Object.entries(seedFiles()))
      if (path.startsWith('overlays/') || path.startsWith('base/kustomization'))
        expect(readRepoFile(path)).toBe(content);
    expect(kubectl('prod', ['get', '--raw', '/readyz']).trim()).toBe('ok');
    for (const [cluster, env] of [
      ['nonprod', 'dev'],
      ['nonprod', 'staging'],
      ['prod', 'prod'],
    ] as const) {
      const k = getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', `digital-human-${env}`]);
      expect(String((k.status as { lastAppliedRevision?: string }).lastAppliedRevision)).toContain(head);
    }
    await waitFor(
      'the console to see prod again',
      async () => {
        const c = (await as(admin, base(), '/api/clusters')).body.clusters as Array<{ name: string; status: string }>;
        return c.find((x) => x.name === 'prod')?.status === 'connected';
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    const [intent, outcome] = await evidenceOf(job);
    expect(intent).toMatchObject({ type: 'sandbox.reset', actor: 'sandbox-scenario', data: { by: 'admin' } });
    expect(outcome).toMatchObject({ type: 'action.completed', data: { action: 'sandbox.reset' } });
  }, 420_000);
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
