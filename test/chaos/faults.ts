// The chaos matrix's columns (issue 42): each fault is injected from outside the console (the sandbox's processes,
// the private PostgreSQL, the replica's own process limits) and healed the same way. "Reported" is what the console
// says while the fault lasts, read through its API as a user or a probe would.
import { startApiserver } from '../../sandbox/sandbox.ts';
import {
  forgeBranchHead,
  makeForgeReachable,
  makeForgeUnreachable,
  makeRegistryReachable,
  makeRegistryUnreachable,
} from '../../sandbox/scenario.ts';
import { mustState } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as } from '../support/auth.ts';
import { allowFileWrites, denyFileWrites } from '../support/store-outage.ts';
import type { Fault, FaultContext, Replica } from './types.ts';

const alive = (r: Replica) => r.child.exitCode === null && r.child.signalCode === null;

function apiserverPid(cluster: string): number {
  const c = mustState().clusters.find((x) => x.name === cluster);
  const p = c?.procs.find((x) => x.name === 'kube-apiserver');
  if (!p) throw new Error(`no apiserver for cluster ${cluster}`);
  return p.pid;
}

/** What the actor (or the reader, when the actor is gone) says of the cluster: its status in /api/clusters. */
async function clusterStatus(ctx: FaultContext): Promise<string> {
  const r = alive(ctx.console.actor) ? ctx.console.actor : ctx.console.reader();
  const res = await as(r.admin, r.base, '/api/clusters').catch(() => undefined);
  const c = (res?.body?.clusters as Array<{ name: string; status: string }> | undefined)?.find(
    (x) => x.name === ctx.cluster,
  );
  return c?.status ?? 'no answer';
}

/** Until the actor says the cluster is not connected (≤ 20 s: its probe's 3 s timeout, then the next probe). */
async function saysUnreachable(ctx: FaultContext): Promise<{ ok: boolean; said: string }> {
  let said = '';
  const ok = await waitFor(
    'the console reports the cluster',
    async () => {
      said = await clusterStatus(ctx);
      return said !== 'connected';
    },
    { timeoutMs: 20_000, intervalMs: 500 },
  ).then(
    () => true,
    () => false,
  );
  return { ok, said: `cluster ${said}` };
}

/** Until the actor's /readyz says its evidence store is failing (≤ 20 s), or its answer said the store is away. */
async function saysStoreFailing(ctx: FaultContext): Promise<{ ok: boolean; said: string }> {
  const a = ctx.answer;
  if (a && !('error' in a) && a.status === 503 && /EvidenceUnavailable|StoreUnavailable/.test(a.text))
    return {
      ok: true,
      said: `answered 503 ${/StoreUnavailable/.test(a.text) ? 'StoreUnavailable' : 'EvidenceUnavailable'}`,
    };
  const r = ctx.console.actor;
  let said = '';
  const ok = await waitFor(
    'the console reports the store',
    async () => {
      const res = await fetch(`${r.base}/readyz`);
      const body = (await res.json()) as { evidence?: { failing?: boolean; pending?: number } };
      said = `evidence failing=${body.evidence?.failing} pending=${body.evidence?.pending}`;
      return body.evidence?.failing === true;
    },
    { timeoutMs: 20_000, intervalMs: 500 },
  ).then(
    () => true,
    () => false,
  );
  return { ok, said };
}

async function clusterBack(ctx: FaultContext): Promise<void> {
  await waitFor('the console sees the cluster again', async () => (await clusterStatus(ctx)) === 'connected', {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
}

const HELD = ['after-intent', 'after-act'] as const;

export const FAULTS: Fault[] = [
  {
    id: 'apiserver-hang',
    column: 'apiserver',
    points: [...HELD],
    console: 'pg-pair',
    async inject(ctx) {
      process.kill(apiserverPid(ctx.cluster), 'SIGSTOP');
    },
    reported: saysUnreachable,
    async heal(ctx) {
      process.kill(apiserverPid(ctx.cluster), 'SIGCONT');
      await clusterBack(ctx);
    },
  },
  {
    id: 'apiserver-crash',
    column: 'apiserver',
    points: ['after-intent'],
    console: 'pg-pair',
    async inject(ctx) {
      process.kill(apiserverPid(ctx.cluster), 'SIGKILL');
    },
    reported: saysUnreachable,
    async heal(ctx) {
      await startApiserver(ctx.cluster);
      await clusterBack(ctx);
    },
  },
  {
    id: 'forge-stop',
    column: 'forge/registry',
    points: ['after-intent'],
    console: 'pg-pair',
    async inject() {
      await makeForgeUnreachable();
    },
    async heal() {
      await makeForgeReachable();
      await waitFor('the forge answers', async () => Boolean(await forgeBranchHead().catch(() => '')), {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
    },
  },
  {
    id: 'registry-stop',
    column: 'forge/registry',
    points: ['after-intent'],
    console: 'pg-pair',
    async inject() {
      await makeRegistryUnreachable();
    },
    async heal() {
      await makeRegistryReachable();
    },
  },
  {
    id: 'postgres-restart',
    column: 'postgres',
    points: ['before-intent', 'after-intent', 'after-act'],
    console: 'pg-pair',
    async inject(ctx) {
      ctx.pg?.stop();
    },
    reported: saysStoreFailing,
    async heal(ctx) {
      ctx.pg?.start();
    },
  },
  {
    id: 'replica-kill',
    column: 'replica',
    points: ['after-intent', 'mid-act', 'after-act'],
    console: 'pg-pair',
    async inject(ctx) {
      const a = ctx.console.actor;
      const exited = new Promise<void>((r) => (alive(a) ? a.child.once('exit', () => r()) : r()));
      a.child.kill('SIGKILL');
      await exited;
    },
    async reported(ctx) {
      const peer = ctx.console.peer;
      if (!peer) return { ok: false, said: 'no peer' };
      const r = await fetch(`${peer.base}/readyz`).catch(() => undefined);
      return { ok: r?.status === 200, said: `peer /readyz ${r?.status ?? 'no answer'}` };
    },
    async heal() {
      // the killed replica is started again before the next cell (Console.respawnActor); the survivor recovers
    },
  },
  {
    id: 'disk-full',
    column: 'disk',
    points: ['before-intent', 'after-act'],
    console: 'sqlite',
    async inject(ctx) {
      denyFileWrites(ctx.console.actor.child.pid ?? 0);
    },
    reported: saysStoreFailing,
    async heal(ctx) {
      allowFileWrites(ctx.console.actor.child.pid ?? 0);
    },
  },
  {
    id: 'clock-skew',
    column: 'clock',
    points: ['during'],
    console: 'skewed-pair',
    async inject(ctx) {
      ctx.note('actor +2 min, peer −2 min');
    },
    async heal() {},
  },
];
