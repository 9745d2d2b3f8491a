// Chaos, the first cells of issue 42's matrix: the replica acting is killed (SIGKILL, at a test-only fault point)
// right after an action's intent is recorded, or right after the action and before its outcome. Two BFF replicas on
// one PostgreSQL; the file's own Flux app (own-estate.ts). Checked from outside afterwards: the cluster (was the
// Kustomization suspended?), the other replica's evidence (the intent has exactly one outcome, `action.interrupted`,
// recorded once by the survivor) and the freeze itself (the survivor sees it and ends it, restoring Flux).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as } from '../support/auth.ts';
import { spawnBff } from '../support/bff-process.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';

type Bff = Awaited<ReturnType<typeof spawnBff>>;
let pg: PgServer | undefined;
let estate: Estate;
let survivor: Bff;
const started: Bff[] = [];

const env = () => ({
  DATABASE_URL: (pg as PgServer).url,
  CONSOLE_RELEASE_RECORDER: 'off',
  // an open intent nobody renewed for 2 s belongs to a stopped process (default 120 s)
  CONSOLE_INTENT_STALE_SECONDS: '2',
});

async function replica(name: string, faults?: string): Promise<Bff> {
  const b = await spawnBff(name, { env: { ...env(), ...(faults ? { CONSOLE_TEST_FAULTS: faults } : {}) } });
  started.push(b);
  return b;
}

const suspended = () =>
  (
    getJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', estate.kustomization()]).spec as {
      suspend?: boolean;
    }
  ).suspend === true;

async function events(type: string): Promise<EvidenceEvent[]> {
  const r = await as(survivor.admin, survivor.base, `/api/evidence?type=${type}&limit=200`);
  expect(r.status, r.text).toBe(200);
  return r.body.events as EvidenceEvent[];
}

/** The outcomes recorded for intent `seq` (completed, failed or interrupted). */
async function outcomesOf(seq: number): Promise<EvidenceEvent[]> {
  const all = await Promise.all(['action.completed', 'action.failed', 'action.interrupted'].map((t) => events(t)));
  return all.flat().filter((e) => e.data.intentSeq === seq);
}

/** Until the survivor has recorded an outcome for intent `seq` (its sweep runs every second here). */
const untilOutcome = (seq: number) =>
  waitFor('the survivor records the intent interrupted', async () => (await outcomesOf(seq)).length > 0, {
    timeoutMs: 20_000,
    intervalMs: 500,
  });

/** Starts a freeze through `victim`, armed to die at a point of it; returns the freeze's intent once it is recorded. */
async function freezeUntilKilled(victim: Bff): Promise<EvidenceEvent> {
  const exited = new Promise<void>((r) =>
    victim.child.exitCode !== null || victim.child.signalCode ? r() : victim.child.once('exit', () => r()),
  );
  const answered = await as(victim.admin, victim.base, '/api/freezes', {
    method: 'POST',
    body: { cluster: estate.cluster, app: estate.appId(), reason: 'chaos: killed half-way', minutes: 30 },
  }).catch((e: unknown) => e);
  // the process died mid-request: no answer came
  expect(answered).toBeInstanceOf(Error);
  await exited;
  expect(victim.child.signalCode).toBe('SIGKILL');
  const intents = (await events('freeze.started')).filter((e) => e.app === estate.appId());
  expect(intents.length).toBeGreaterThan(0);
  return intents.sort((a, b) => b.seq - a.seq)[0] as EvidenceEvent;
}

beforeAll(async () => {
  pg = await startPostgres();
  estate = await ownEstate({ name: 'chaos', env: 'dev', files: digitalHumanTemplate('dev') });
  survivor = await replica('chaos-survivor');
}, 600_000);

afterAll(async () => {
  try {
    for (const b of started) if (b.child.exitCode === null && b.child.signalCode === null) await b.stop();
    await estate?.teardown();
  } finally {
    for (const b of started) rmSync(b.dataDir, { recursive: true, force: true });
    await pg?.stop();
  }
}, 300_000);

describe('a replica killed half-way through a freeze start', () => {
  it('after the intent, before acting: nothing was done, and the survivor records the intent interrupted, once', async () => {
    const victim = await replica('chaos-after-intent', 'freeze.started:after-intent');
    const intent = await freezeUntilKilled(victim);
    expect(suspended(), 'the freeze never acted').toBe(false);
    await untilOutcome(intent.seq);
    const outcomes = await outcomesOf(intent.seq);
    expect(outcomes).toMatchObject([
      { type: 'action.interrupted', data: { action: 'freeze.started', intentSeq: intent.seq } },
    ]);
    // no freeze came of it: the survivor lists none active for the app
    const list = await as(survivor.admin, survivor.base, '/api/freezes');
    const active = (list.body.freezes as Array<{ active: boolean; targets: Array<{ appId: string }> }>).filter(
      (f) => f.active && f.targets.some((t) => t.appId === estate.appId()),
    );
    expect(active).toEqual([]);
  });

  it('after acting, before the outcome: Flux is suspended, the intent interrupted once, and the survivor ends the freeze', async () => {
    const victim = await replica('chaos-after-act', 'freeze.started:after-act');
    const intent = await freezeUntilKilled(victim);
    expect(suspended(), 'the freeze acted').toBe(true);
    await untilOutcome(intent.seq);
    // a few sweeps later, still exactly one
    await new Promise((r) => setTimeout(r, 2000));
    expect((await outcomesOf(intent.seq)).map((e) => e.type)).toEqual(['action.interrupted']);
    // the freeze the dead replica made is the survivor's to end: it sees it, ends it, Flux resumes
    const list = await as(survivor.admin, survivor.base, '/api/freezes');
    const mine = (list.body.freezes as Array<{ id: string; active: boolean; targets: Array<{ appId: string }> }>).find(
      (f) => f.active && f.targets.some((t) => t.appId === estate.appId()),
    );
    expect(mine, list.text).toBeDefined();
    const end = await as(survivor.admin, survivor.base, `/api/freezes/${mine?.id}/end`, {
      method: 'POST',
      body: { decisions: [] },
    });
    expect(end.status, end.text).toBe(200);
    await waitFor('Flux resumed', async () => !suspended(), { timeoutMs: 30_000, intervalMs: 500 });
  });
});
