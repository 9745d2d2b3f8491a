// Flagger with its real controller (issue 25), on this file's own estate (test/support/canary-estate.ts): the seed's
// payments app in its own repository, applied by its own Flux Kustomization into its own staging namespace, manages
// the Deployment `payments` and its Canary (blue/green on the kubernetes provider, 3 iterations 5 s apart — Flagger
// runs them 10 s apart, its floor —, the estate's own business endpoint, a SIMULATION, as its rollout webhook and a
// rollback gate — sandbox/flagger-gate.ts; the tests add a confirm-promotion gate). A new image: the
// analysis passes and the canary waits on its gate; promote through the console is governed (viewer 403, no reason
// 400, the intent recorded before the gate opens) and Flagger promotes; the release chain records the canary step by
// step and its verification is the promotion. The business endpoint made to fail: Flagger rolls the canary back and
// the release is failed. A governed rollback opens the rollback gate and Flagger rolls back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, FlaggerCanaryDto, ReleasesResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { holdsFor, waitFor } from '../../sandbox/procs.ts';
import { PAYMENTS_IMAGE } from '../../sandbox/seed.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { canaryEstate, type CanaryEstate } from '../support/canary-estate.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';

const IMAGES = ['0.9.2', '0.9.3'].map((t) => PAYMENTS_IMAGE.replace(':0.9.3', `:${t}`));

let pay: CanaryEstate;
/** the app's id in the console and the Canary's namespace (the estate's) */
let APP: string;
let NS: string;
const ACTION = (verb: string) => `/api/apps/${APP}/canaries/${NS}/payments/${verb}`;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let oncall: Signed;
let viewer: Signed;

const liveImage = () =>
  (
    JSON.parse(pay.kubectl(['get', 'deployment', 'payments', '-o', 'json'])) as {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    }
  ).spec.template.spec.containers[0]?.image;
/** the image the Deployment does not run now (each test's canary is a real change) */
const otherImage = () => (liveImage() === IMAGES[0] ? IMAGES[1] : IMAGES[0]) as string;

async function canary(): Promise<FlaggerCanaryDto | undefined> {
  const r = await as(viewer, con.url, `/api/apps/${APP}`);
  expect(r.status).toBe(200);
  return (r.body as AppResponse).canaries?.find((x) => x.name === 'payments');
}
async function waitCanary(what: string, ok: (c: FlaggerCanaryDto) => boolean, timeoutMs = 150_000) {
  let last: FlaggerCanaryDto | undefined;
  await waitFor(
    what,
    async () => {
      last = await canary();
      return !!last && ok(last);
    },
    { timeoutMs, intervalMs: 1000 },
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}; last: ${JSON.stringify(last)}`.slice(0, 3000));
  });
  return last as FlaggerCanaryDto;
}
/** a new revision of the Deployment (a change note makes each one new to Flagger, whatever the image), applied */
const commitImage = (image: string, gate = true): Promise<string> => pay.commit(image, { gate });
async function evidence(type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&app=${encodeURIComponent(APP)}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}
async function release(sha: string) {
  const r = await as(con.admin, con.url, `/api/apps/${APP}/releases`);
  expect(r.status).toBe(200);
  return (r.body as ReleasesResponse).releases.find((x) => x.sha === sha);
}
const settled = (c: FlaggerCanaryDto) =>
  ['Succeeded', 'Initialized', 'Failed'].includes(c.phase) && c.lastAppliedSpec !== null;

beforeAll(async () => {
  [pay, con] = await Promise.all([canaryEstate('flagger'), startTestConsole(RECORDER_ON)]);
  APP = pay.app;
  NS = pay.namespace;
  oncall = await signIn(con.url, 'oncall');
  viewer = await signIn(con.url, 'viewer');
  await waitCanary('the estate’s Canary is initialized', settled, 180_000);
}, 300_000);

// the estate goes with everything Flagger made in it; nothing to restore
afterAll(async () => {
  await Promise.allSettled([pay?.teardown(), con?.close()]);
}, 120_000);

describe('Flagger canaries, governed, in the release chain', () => {
  it('a new image: the analysis passes and waits on the gate; a governed promote; the chain records it', async () => {
    const before = await canary();
    const sha = await commitImage(otherImage());
    const waiting = await waitCanary(
      'the canary waits for its promotion gate',
      (c) => c.phase === 'WaitingPromotion' && c.lastAppliedSpec !== before?.lastAppliedSpec,
    );
    expect(waiting.iteration).toBeGreaterThanOrEqual(2);
    expect(waiting.failedChecks).toBe(0);
    // nothing promotes it while the gate is closed
    await holdsFor(
      'the canary stays at its closed gate',
      8000,
      async () => (await canary())?.phase === 'WaitingPromotion',
      {
        intervalMs: 1000,
      },
    );
    // a viewer may not; on-call without a reason may not
    expect((await as(viewer, con.url, ACTION('promote'), { method: 'POST', body: { reason: 'ship' } })).status).toBe(
      403,
    );
    expect((await as(oncall, con.url, ACTION('promote'), { method: 'POST', body: {} })).status).toBe(400);
    const ok = await as(oncall, con.url, ACTION('promote'), {
      method: 'POST',
      body: { reason: 'payments canary checked by hand' },
    });
    expect(ok.status, ok.text).toBe(200);
    await waitCanary(
      'promoted',
      (c) => c.phase === 'Succeeded' && c.lastPromotedSpec === waiting.lastAppliedSpec,
      120_000,
    );
    const intent = (await evidence('rollout.control')).find(
      (e) => (e.data as { reason?: string }).reason === 'payments canary checked by hand',
    );
    expect(intent?.data).toMatchObject({
      controller: 'flagger',
      verb: 'promote',
      canary: `${NS}/payments`,
      before: { phase: 'WaitingPromotion', lastAppliedSpec: waiting.lastAppliedSpec },
      gate: { webhook: 'promotion-gate' },
    });
    const completed = (await evidence('action.completed')).find(
      (e) => (e.data as { intentSeq?: number }).intentSeq === intent?.seq,
    );
    expect(completed).toBeDefined();
    // the release chain: the canary step by step, and its verification is the promotion
    await waitFor(
      'the release is verified by its canary',
      async () => (await release(sha))?.states.find((s) => s.name === 'verification')?.status === 'ok',
      { timeoutMs: 120_000, intervalMs: 2000 },
    );
    const r = await release(sha);
    expect(r?.canary?.map((c) => c.phase)).toEqual(expect.arrayContaining(['WaitingPromotion', 'Succeeded']));
    const v = r?.states.find((s) => s.name === 'verification');
    expect(JSON.stringify(v?.data)).toContain('"state":"promoted"');
    // verified by the promotion, not before it (Flagger's status lags the target's change by a loop)
    expect(Date.parse(v?.time ?? '')).toBeGreaterThanOrEqual(Date.parse(intent?.time ?? 'x'));
    const health = r?.states.find((s) => s.name === 'health');
    expect(Date.parse(health?.time ?? '')).toBeGreaterThanOrEqual(Date.parse(intent?.time ?? 'x'));
    expect((v?.data?.canary as { promotedSecondsAfterCommit?: number }).promotedSecondsAfterCommit).toBeGreaterThan(0);
  }, 360_000);

  it('the business endpoint fails: Flagger rolls the canary back and the release is failed', async () => {
    pay.business.set({ mode: 'fail' });
    const sha = await commitImage(otherImage(), false);
    await waitCanary('rolled back', (c) => c.phase === 'Failed', 150_000);
    await waitFor(
      'the release is failed by its canary',
      async () => (await release(sha))?.states.find((s) => s.name === 'verification')?.status === 'failed',
      { timeoutMs: 150_000, intervalMs: 2000 },
    ).catch(async (e: unknown) => {
      const r = await release(sha);
      throw new Error(
        `${String(e)}; release: ${JSON.stringify(r?.states.map((x) => [x.name, x.status, x.why]))}; canary: ${JSON.stringify(r?.canary)}`,
      );
    });
    const v = (await release(sha))?.states.find((s) => s.name === 'verification');
    expect(v?.why).toMatch(
      new RegExp(`canary ${NS}/payments rolled back at iteration \\d+ of 3 after [1-9]\\d* failed check\\(s\\)`),
    );
    // counted in the change failure rate of staging
    const m = await as(con.admin, con.url, `/api/envs/staging/releases`);
    expect(m.status).toBe(200);
    // (every app of the repo has a release at this sha: the row of this app)
    const row = (
      m.body as { releases: Array<{ app: string; sha: string; failed: boolean; failures: string[] }> }
    ).releases.find((x) => x.sha === sha && x.app === APP);
    expect(row?.failed).toBe(true);
    expect(row?.failures.join(' ')).toMatch(/rolled back/);
  }, 360_000);

  it('a freeze suspends the app’s Canary and the end restores it exactly', async () => {
    const suspended = () =>
      (
        JSON.parse(pay.kubectl(['get', 'canary', 'payments', '-o', 'json'])) as {
          spec: { suspend?: boolean };
        }
      ).spec.suspend;
    expect(suspended()).toBeUndefined();
    // (right after the previous test's commit Flux is still writing the Kustomization: the freeze's precondition
    // can meet a newer resourceVersion and answer 409 "try again", which is what a person then does)
    let r = await as(oncall, con.url, '/api/freezes', {
      method: 'POST',
      body: { cluster: 'nonprod', app: APP, reason: 'payments incident', minutes: 10 },
    });
    for (let i = 0; r.status === 409 && i < 5; i++) {
      await new Promise((res) => setTimeout(res, 2000));
      r = await as(oncall, con.url, '/api/freezes', {
        method: 'POST',
        body: { cluster: 'nonprod', app: APP, reason: 'payments incident', minutes: 10 },
      });
    }
    expect(r.status, r.text).toBe(200);
    const id = (r.body as { freeze: { id: string } }).freeze.id;
    expect(suspended()).toBe(true);
    const started = (await evidence('freeze.started')).find((e) => (e.data as { freezeId?: string }).freezeId === id);
    expect(JSON.stringify(started?.data)).toContain(
      `"rollouts":[{"kind":"Canary","namespace":"${NS}","name":"payments","paused":null}]`,
    );
    const end = await as(oncall, con.url, `/api/freezes/${id}/end`, { method: 'POST', body: { decisions: [] } });
    expect(end.status, end.text).toBe(200);
    expect(suspended()).toBeUndefined();
  }, 120_000);

  it('a governed rollback opens the rollback gate and Flagger rolls back', async () => {
    pay.business.set({ mode: 'ok' });
    const before = await canary();
    await commitImage(otherImage());
    await waitCanary(
      'analysing the new revision',
      (c) => ['Progressing', 'WaitingPromotion'].includes(c.phase) && c.lastAppliedSpec !== before?.lastAppliedSpec,
    );
    const r = await as(oncall, con.url, ACTION('rollback'), {
      method: 'POST',
      body: { reason: 'payments error budget burning' },
    });
    expect(r.status, r.text).toBe(200);
    await waitCanary('rolled back on request', (c) => c.phase === 'Failed', 120_000);
    // nothing to roll back any more: 409, and no second intent
    const again = await as(oncall, con.url, ACTION('rollback'), {
      method: 'POST',
      body: { reason: 'payments error budget burning' },
    });
    expect(again.status).toBe(409);
    const intents = (await evidence('rollout.control')).filter(
      (e) => (e.data as { reason?: string }).reason === 'payments error budget burning',
    );
    expect(intents).toHaveLength(1);
  }, 300_000);
});
