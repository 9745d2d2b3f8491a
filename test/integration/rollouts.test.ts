// Argo Rollouts with its real controller (issue 25), on this file's own estate (test/support/rollout-estate.ts): the
// seed's checkout app in its own repository, synced by its own Argo CD Application into its own staging namespace,
// manages the Rollout `checkout` (canary 20 % → a pause → the business check against the estate's own business
// endpoint, a SIMULATION → 50 % → a pause → full; the pauses 30 s and 10 s where the test promotes past them, 3 s
// and 1 s where it waits them out). A new image starts a canary;
// the console shows its steps and weight as the controller reports them; promote-full through the console is
// governed (a viewer 403, no reason 400, the intent recorded before the patch); the business endpoint made to
// fail fails the AnalysisRun and the Rollout aborts (shown with the analysis's message); retry through the console
// runs the canary again and it completes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, ReleaseDto, ReleasesResponse, RolloutDto } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { CHECKOUT_IMAGE } from '../../sandbox/seed.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { rolloutEstate, type RolloutEstate } from '../support/rollout-estate.ts';

const OTHER_IMAGE = CHECKOUT_IMAGE.replace(':0.9.3', ':0.9.2');

let co: RolloutEstate;
/** the app's id in the console and the Rollout's namespace (the estate's) */
let APP: string;
let NS: string;
const ACTION = (verb: string) => `/api/apps/${APP}/rollouts/${NS}/checkout/${verb}`;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let oncall: Signed;
let viewer: Signed;

async function rollout(): Promise<RolloutDto | undefined> {
  const r = await as(viewer, con.url, `/api/apps/${APP}`);
  expect(r.status).toBe(200);
  return (r.body as AppResponse).rollouts?.find((x) => x.name === 'checkout');
}
async function waitRollout(what: string, ok: (r: RolloutDto) => boolean, timeoutMs = 150_000): Promise<RolloutDto> {
  let last: RolloutDto | undefined;
  await waitFor(
    what,
    async () => {
      last = await rollout();
      return !!last && ok(last);
    },
    { timeoutMs, intervalMs: 1000 },
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}; last: ${JSON.stringify(last)}`.slice(0, 3000));
  });
  return last as RolloutDto;
}
async function waitRelease(sha: string, status: 'ok' | 'failed'): Promise<ReleaseDto> {
  let last: ReleaseDto | undefined;
  await waitFor(
    `the release's verification is ${status}`,
    async () => {
      const r = await as(con.admin, con.url, `/api/apps/${APP}/releases`);
      last = (r.body as ReleasesResponse).releases.find((x) => x.sha === sha);
      return last?.states.find((x) => x.name === 'verification')?.status === status;
    },
    { timeoutMs: 150_000, intervalMs: 2000 },
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}; last: ${JSON.stringify(last?.states.map((x) => [x.name, x.status, x.why]))}`);
  });
  return last as ReleaseDto;
}
async function evidence(type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}

beforeAll(async () => {
  [co, con] = await Promise.all([rolloutEstate('rollouts'), startTestConsole(RECORDER_ON)]);
  APP = co.app;
  NS = co.namespace;
  oncall = await signIn(con.url, 'oncall');
  viewer = await signIn(con.url, 'viewer');
  await waitRollout('the estate’s Rollout is Healthy', (r) => r.phase === 'Healthy');
}, 300_000);

// the estate goes with its Rollout and AnalysisRuns; nothing to restore
afterAll(async () => {
  await Promise.allSettled([co?.teardown(), con?.close()]);
}, 120_000);

describe('Argo Rollouts canaries, governed', () => {
  it('a new image: the canary pauses at 20 %; promote-full is governed and recorded before the patch', async () => {
    // the seed's pauses: the test acts within the first one (30 s), and promotes past both
    const sha = await co.commit(OTHER_IMAGE);
    const paused = await waitRollout('the canary pauses at 20 %', (r) => r.phase === 'Paused' && r.weight === 20);
    expect(paused.steps.map((s) => s.state)).toEqual(['done', 'current', 'pending', 'pending', 'pending']);
    expect(paused.paused?.reasons).toEqual(['CanaryPauseStep']);
    expect(paused.canaryHash).not.toBe(paused.stableHash);
    // the release chain records the step as it happens (the pause lasts 30 s)
    await waitFor(
      'the paused step in the release chain',
      async () => {
        const r = await as(con.admin, con.url, `/api/apps/${APP}/releases`);
        const rel = (r.body as ReleasesResponse).releases.find((x) => x.sha === sha);
        return !!rel?.canary?.some((c) => c.weight === 20 && c.phase === 'Paused');
      },
      { timeoutMs: 25_000, intervalMs: 1000 },
    );
    // a viewer may not; on-call without a reason may not
    expect(
      (await as(viewer, con.url, ACTION('promote-full'), { method: 'POST', body: { reason: 'ship it' } })).status,
    ).toBe(403);
    const noReason = await as(oncall, con.url, ACTION('promote-full'), { method: 'POST', body: {} });
    expect(noReason.status).toBe(400);
    const ok = await as(oncall, con.url, ACTION('promote-full'), {
      method: 'POST',
      body: { reason: 'checkout fix verified by hand' },
    });
    expect(ok.status, ok.text).toBe(200);
    const done = await waitRollout(
      'fully promoted',
      (r) => r.phase === 'Healthy' && r.stableHash === paused.canaryHash,
    );
    expect(done.weight).toBe(100);
    // the intent, then its outcome
    const intent = (await evidence('rollout.control')).find(
      (e) => (e.data as { verb?: string }).verb === 'promote-full' && e.actor === 'oncall',
    );
    expect(intent?.data).toMatchObject({
      reason: 'checkout fix verified by hand',
      rollout: `${NS}/checkout`,
      before: { phase: 'Paused', weight: 20 },
    });
    const completed = (await evidence('action.completed')).find(
      (e) => (e.data as { intentSeq?: number }).intentSeq === intent?.seq,
    );
    expect(completed).toBeDefined();
    // the release chain: the canary step by step (20 %, paused), and its verification is the full promotion
    const r = await waitRelease(sha, 'ok');
    expect(r.canary?.some((c) => c.weight === 20 && c.phase === 'Paused')).toBe(true);
    expect(r.canary?.at(-1)?.state).toBe('promoted');
    const v = r.states.find((x) => x.name === 'verification');
    expect((v?.data?.canary as { promotedSecondsAfterCommit?: number }).promotedSecondsAfterCommit).toBeGreaterThan(0);
  }, 300_000);

  it('the business endpoint fails: the AnalysisRun fails and the Rollout aborts; retry through the console completes the canary', async () => {
    co.business.set({ mode: 'fail' });
    // nothing to do within the pauses here: they are short, and the check's measurements 2 s apart
    const sha = await co.commit(CHECKOUT_IMAGE, { pauses: ['3s', '1s'], checkInterval: '2s' });
    const aborted = await waitRollout('the canary aborts on its analysis', (r) => r.aborted, 180_000);
    expect(aborted.phase).toBe('Degraded');
    // the measured reason: the endpoint's 503
    expect(aborted.message).toMatch(/RolloutAborted.*503/);
    expect(aborted.analysis?.status).toMatch(/Failed|Error/);
    // the release is failed with what the analysis measured
    const failed = await waitRelease(sha, 'failed');
    expect(failed.states.find((x) => x.name === 'verification')?.why).toMatch(
      new RegExp(`canary ${NS}/checkout aborted at step 3 of 5: analysis \\S+ business-endpoint (error|failed): .*503`),
    );
    // the endpoint is fixed; on-call retries with a reason
    co.business.set({ mode: 'ok' });
    const r = await as(oncall, con.url, ACTION('retry'), { method: 'POST', body: { reason: 'endpoint fixed, retry' } });
    expect(r.status, r.text).toBe(200);
    await waitRollout(
      'the retried canary completes',
      (x) => x.phase === 'Healthy' && !x.aborted && x.weight === 100,
      180_000,
    );
  }, 420_000);

  it('a freeze pauses the app’s Rollout and the end restores it exactly', async () => {
    const specPaused = () =>
      (
        JSON.parse(co.kubectl(['get', 'rollout', 'checkout', '-o', 'json'])) as {
          spec: { paused?: boolean };
        }
      ).spec.paused;
    expect(specPaused()).toBeUndefined();
    const r = await as(oncall, con.url, '/api/freezes', {
      method: 'POST',
      body: { cluster: 'nonprod', app: APP, reason: 'checkout incident', minutes: 10 },
    });
    expect(r.status, r.text).toBe(200);
    const id = (r.body as { freeze: { id: string } }).freeze.id;
    expect(specPaused()).toBe(true);
    const started = (await evidence('freeze.started')).find((e) => (e.data as { freezeId?: string }).freezeId === id);
    expect(JSON.stringify(started?.data)).toContain(
      `"rollouts":[{"namespace":"${NS}","name":"checkout","paused":null}]`,
    );
    const end = await as(oncall, con.url, `/api/freezes/${id}/end`, { method: 'POST', body: { decisions: [] } });
    expect(end.status, end.text).toBe(200);
    expect(specPaused()).toBeUndefined();
  }, 120_000);
});
