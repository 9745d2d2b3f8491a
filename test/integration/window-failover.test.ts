// Issue 43's acceptance: a replica killed at a planned window's start → the other starts it once. Two BFF
// replicas on one PostgreSQL with the recorder Lease (the one-replica work, planned windows included, runs on its
// holder), both as the console's own identity. The holder is armed to kill itself (SIGKILL) right after it records
// the intent of the window's first freeze — after it recorded the occurrence's start, before any cluster was
// touched. Checked from outside: the other replica takes the Lease over and freezes the app (Flux suspended) with
// one freeze; the window's start is recorded once; the dead replica's intent is marked interrupted, the survivor's
// completed; at the window's end the automation comes back exactly.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { getJson } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as } from '../support/auth.ts';
import { spawnBff } from '../support/bff-process.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

type Bff = Awaited<ReturnType<typeof spawnBff>>;
let pg: PgServer | undefined;
let estate: Estate;
let holder: Bff | undefined;
let survivor: Bff | undefined;
const LEASE_NS = `window-failover-${process.pid}`;
const LEASE = 'gitops-console-recorder';

const FILES = {
  'apps/web/kustomization.yaml':
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cm.yaml\n',
  'apps/web/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: failover-settings\ndata:\n  mode: normal\n',
};

const leaseHolder = (): string => {
  try {
    const l = getJson('nonprod', ['-n', LEASE_NS, 'get', 'lease', LEASE]);
    return String((l.spec as { holderIdentity?: string }).holderIdentity ?? '');
  } catch {
    return '';
  }
};

beforeAll(async () => {
  kubectl('nonprod', ['create', 'namespace', LEASE_NS]);
  pg = await startPostgres();
  estate = await ownEstate({ name: 'failover', env: 'dev', files: FILES, apps: [{ name: 'web', path: 'apps/web' }] });
  const env = {
    DATABASE_URL: pg.url,
    CONSOLE_RELEASE_RECORDER: 'on',
    CONSOLE_VERIFICATION_INTERVAL_S: '600',
    CONSOLE_RECORDER_LEASE: `${LEASE_NS}/${LEASE}`,
    CONSOLE_RECORDER_LEASE_CLUSTER: 'nonprod',
    // a stopped replica's open intent is found after 2 s unrenewed
    CONSOLE_INTENT_STALE_SECONDS: '2',
  };
  // the first replica takes the Lease; it is armed to die at the first freeze intent it records
  holder = await spawnBff('failover-a', { env: { ...env, CONSOLE_TEST_FAULTS: 'freeze.started:after-intent' } });
  const pid = String(holder.child.pid);
  await waitFor('the first replica holds the Lease', async () => leaseHolder().includes(`-${pid}-`), {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
  survivor = await spawnBff('failover-b', { env });
}, 600_000);

afterAll(async () => {
  try {
    for (const b of [holder, survivor])
      if (b && b.child.exitCode === null && b.child.signalCode === null) await b.stop().catch(() => undefined);
    await estate?.teardown();
  } finally {
    for (const b of [holder, survivor]) if (b) rmSync(b.dataDir, { recursive: true, force: true });
    await pg?.stop();
    kubectl('nonprod', ['delete', 'namespace', LEASE_NS, '--ignore-not-found', '--wait=false']);
  }
}, 300_000);

const iso = (ms: number) => new Date(ms).toISOString();
const spec = () => getJson(estate.cluster, ['-n', 'flux-system', 'get', 'kustomization', estate.kustomization('web')]);
const suspended = () => (spec().spec as { suspend?: boolean }).suspend === true;

describe('a planned window when the replica starting it dies', () => {
  it('the Lease holder killed at the window start: the other replica starts it once', async () => {
    const b = survivor as Bff;
    const a = holder as Bff;
    const APP = estate.appId('web');
    await waitFor('both replicas list the app', async () => {
      for (const r of [a, b]) if ((await as(r.admin, r.base, `/api/apps/${APP}`)).status !== 200) return false;
      return true;
    });
    const before = spec().spec;
    const died = new Promise<NodeJS.Signals | null>((resolve) => a.child.once('exit', (_, sig) => resolve(sig)));
    const start = Date.now() + 6_000;
    // long enough for a takeover on a loaded machine (a Lease is taken over 15 s after its last renewal)
    const end = start + 80_000;
    const made = await as(b.admin, b.base, '/api/freeze-windows', {
      method: 'POST',
      body: { name: 'failover-stop', reason: 'release stop', scope: { apps: [APP] }, start: iso(start), end: iso(end) },
    });
    expect(made.status, made.text).toBe(200);

    // the holder dies at its first look after the start (a tick every 5 s), before it touched the cluster
    expect(await died).toBe('SIGKILL');
    expect(Date.now()).toBeGreaterThanOrEqual(start);
    expect(suspended()).toBe(false);

    // the survivor takes the Lease over (15 s unrenewed) and freezes the app
    await waitFor('the survivor froze the app', async () => suspended(), { timeoutMs: 70_000, intervalMs: 500 });
    expect(leaseHolder()).toContain(`-${b.child.pid}-`);
    const events = async (type: string) =>
      ((await as(b.admin, b.base, `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] }).events;
    expect((await events('window.started')).filter((e) => e.data.window === 'failover-stop')).toHaveLength(1);
    const intents = (await events('freeze.started')).filter((e) => e.data.window === 'failover-stop');
    expect(intents).toHaveLength(2);
    const listed = (await as(b.admin, b.base, '/api/freezes?active=true')).body as {
      freezes: Array<{ id: string; targets: Array<{ appId: string }> }>;
    };
    const holding = listed.freezes.filter((f) => f.targets.some((t) => t.appId === APP));
    expect(holding).toHaveLength(1);
    // each intent has exactly one outcome: the dead one's interrupted, the survivor's completed
    await waitFor(
      'the dead replica’s intent marked interrupted',
      async () => {
        const outcomes = (await events('action.interrupted')).map((e) => e.data.intentSeq);
        return outcomes.includes(intents.map((i) => i.seq).sort((x, y) => x - y)[0]);
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    const outcomesOf = async (seq: number) => {
      const all = [
        ...(await events('action.completed')),
        ...(await events('action.failed')),
        ...(await events('action.interrupted')),
      ];
      return all.filter((e) => e.data.intentSeq === seq).map((e) => e.type);
    };
    const [first, second] = intents.map((i) => i.seq).sort((x, y) => x - y) as [number, number];
    expect(await outcomesOf(first)).toEqual(['action.interrupted']);
    expect(await outcomesOf(second)).toEqual(['action.completed']);
    expect(holding[0]!.id).toBe(intents.find((i) => i.seq === second)?.data.freezeId);

    // at the window's end the survivor restores the automation exactly
    await waitFor('the app restored at the window end', async () => !suspended(), {
      timeoutMs: Math.max(0, end - Date.now()) + 60_000,
      intervalMs: 500,
    });
    expect(Date.now()).toBeGreaterThanOrEqual(end);
    expect(spec().spec).toEqual(before);
  }, 240_000);
});
