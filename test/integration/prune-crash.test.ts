// Issue #9: a BFF killed (SIGKILL) in the middle of an approved prune, then restarted on the same store. The BFF
// runs as its own process (test/support/bff-process.ts). prod's Flux Kustomization has `prune: false`, so the
// console deletes itself, in batches of 10: many probe ConfigMaps make the prune long enough to kill it half-way.
// At restart the journal reports exactly what was and was not deleted, and nothing is deleted twice.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { sleep, waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/sandbox.ts';
import {
  commitAndPushRetrying,
  requestReconcile,
  waitForKustomizationRevision,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { as, signIn } from '../support/auth.ts';
import { spawnBff } from '../support/bff-process.ts';

const CLUSTER = 'prod';
const KS = 'digital-human-prod';
const APP = `${CLUSTER}/flux-system/kustomization/${KS}`;
const OVERLAY = 'overlays/prod/kustomization.yaml';
const FILE = 'overlays/prod/crash-probe.yaml';
const N = 120;
const suffix = Date.now().toString(36);
const names = Array.from({ length: N }, (_, i) => `crash-probe-${suffix}-${String(i).padStart(3, '0')}`);
const USERS = {
  'prod-developer': ['developer@prod/prod'],
  'prod-reviewer': ['reviewer@prod/prod'],
  'prod-reviewer-2': ['reviewer@prod/prod'],
};

type Bff = Awaited<ReturnType<typeof spawnBff>>;
let first: Bff | undefined;
let second: Bff | undefined;

type Preview = {
  id: string;
  status: string;
  statusReason: string | null;
  plan: string;
  confirmation: string | null;
  candidates: Array<{ ref: { name: string }; deletable: boolean }>;
  journal: Array<{ batch: number; object: string; state: string; detail: string | null }>;
};

const push = commitAndPushRetrying;

function withoutProbes(w: string): void {
  rmSync(join(w, FILE), { force: true });
  writeRepoFile(w, OVERLAY, readFileSync(join(w, OVERLAY), 'utf8').replace('  - crash-probe.yaml\n', ''));
}

/** The probes live now (one LIST). */
function liveProbes(): Set<string> {
  const out = kubectl(CLUSTER, ['-n', 'prod', 'get', 'configmaps', '-o', 'jsonpath={.items[*].metadata.name}']);
  return new Set(out.split(/\s+/).filter((n) => n.startsWith(`crash-probe-${suffix}-`)));
}

const nameOf = (object: string) => object.split('/').pop() ?? object;

beforeAll(async () => {
  const added = push('crash probes: add', (w) => {
    writeRepoFile(
      w,
      FILE,
      names.map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${n}\ndata:\n  i: "${n}"\n`).join('---\n'),
    );
    const text = readFileSync(join(w, OVERLAY), 'utf8');
    writeRepoFile(w, OVERLAY, text.replace('  - ../../base\n', '  - ../../base\n  - crash-probe.yaml\n'));
  });
  await waitForKustomizationRevision(CLUSTER, KS, added, 180_000);
  expect(liveProbes().size).toBe(N);
  // removed from Git: prune: false keeps them live (and drops them from Flux's inventory)
  const removed = push('crash probes: remove from Git', withoutProbes);
  await waitForKustomizationRevision(CLUSTER, KS, removed, 180_000);
  first = await spawnBff('prune-crash', { accounts: { users: USERS } });
  const bff = first;
  await waitFor(
    `console source at ${removed.slice(0, 8)}`,
    async () => {
      requestReconcile(CLUSTER, 'gitrepository', 'digital-human');
      const r = await as(bff.admin, bff.base, `/api/apps/${APP}`);
      return (
        (r.body as { app?: { source?: { revisionWanted?: string } } }).app?.source?.revisionWanted ?? ''
      ).endsWith(removed);
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
}, 600_000);

afterAll(async () => {
  try {
    if (first && first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    await second?.stop();
    const left = [...liveProbes()];
    for (let i = 0; i < left.length; i += 50)
      kubectl(CLUSTER, [
        '-n',
        'prod',
        'delete',
        'configmap',
        ...left.slice(i, i + 50),
        '--ignore-not-found',
        '--wait=false',
      ]);
  } finally {
    if (first) rmSync(first.dataDir, { recursive: true, force: true });
    if (second) rmSync(second.dataDir, { recursive: true, force: true });
  }
}, 300_000);

describe('a BFF killed mid-prune', () => {
  it('reports at restart exactly what was and was not deleted; nothing is deleted twice', async () => {
    const bff = first as Bff;
    const developer = await signIn(bff.base, 'prod-developer');
    const reviewers = [await signIn(bff.base, 'prod-reviewer'), await signIn(bff.base, 'prod-reviewer-2')];
    const created = await as(developer, bff.base, `/api/apps/${APP}/prune-previews`, { method: 'POST' });
    expect(created.status, created.text).toBe(200);
    const preview = (created.body as { preview: Preview }).preview;
    // over the limits: two approvers and the typed confirmation
    expect(preview.plan).toBe('needs-override');
    expect(preview.candidates.map((c) => c.ref.name).sort()).toEqual(names);
    const approve = (i: number) =>
      as(reviewers[i] as (typeof reviewers)[number], bff.base, `/api/prune-previews/${preview.id}/approve`, {
        method: 'POST',
        body: { comment: 'crash test', confirmation: preview.confirmation },
      });
    expect((await approve(0)).status).toBe(200);
    const last = await approve(1);
    expect(last.status, last.text).toBe(200);

    // kill it half-way: some objects deleted, some still planned
    let seen: Preview | undefined;
    await waitFor(
      'the prune under way',
      async () => {
        seen = ((await as(bff.admin, bff.base, `/api/prune-previews/${preview.id}`)).body as { preview: Preview })
          .preview;
        const states = seen.journal.map((j) => j.state);
        if (seen.status === 'done') throw new Error('the prune finished before the kill: make it longer (N)');
        return states.includes('deleted') && states.includes('planned');
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    bff.child.kill('SIGKILL');
    await new Promise((r) =>
      bff.child.exitCode !== null || bff.child.signalCode ? r(null) : bff.child.once('exit', r),
    );
    const liveAtKill = liveProbes();
    expect(liveAtKill.size).toBeGreaterThan(0);
    expect(liveAtKill.size).toBeLessThan(N);

    // the same store, a new process: recovery at start
    second = await spawnBff('prune-crash-restart', {
      accounts: { users: USERS },
      env: { CONSOLE_DATA_DIR: bff.dataDir },
    });
    const again = second;
    let after: Preview | undefined;
    await waitFor(
      'the interrupted prune reported',
      async () => {
        after = ((await as(again.admin, again.base, `/api/prune-previews/${preview.id}`)).body as { preview: Preview })
          .preview;
        return after.status !== 'executing';
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    const p = after as Preview;
    expect(p.status).toBe('failed');
    const liveNow = liveProbes();
    // the restarted BFF deleted nothing: what was live at the kill is live now
    expect([...liveNow].sort()).toEqual([...liveAtKill].sort());
    const deleted = p.journal.filter((j) => j.state === 'deleted').map((j) => nameOf(j.object));
    const notDeleted = p.journal.filter((j) => j.state === 'not-deleted').map((j) => nameOf(j.object));
    // every object is accounted for, and the journal says exactly what the cluster says
    expect(deleted.length + notDeleted.length).toBe(N);
    expect(new Set(notDeleted)).toEqual(liveNow);
    for (const n of deleted) expect(liveNow.has(n)).toBe(false);
    expect(p.statusReason).toBe(
      `interrupted (the console stopped mid-prune): ${deleted.length} deleted, ${notDeleted.length} not deleted`,
    );

    const ev = async (type: string) =>
      ((await as(again.admin, again.base, `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] })
        .events;
    const executed = (await ev('prune.executed')).filter((e) => e.data.previewId === preview.id);
    expect(executed).toHaveLength(1);
    expect(executed[0]?.data).toMatchObject({ status: 'failed', recovered: true, deleted: deleted.length });
    // nothing deleted twice: at most one delete intent per object, none after the restart
    const intents = (await ev('prune.delete')).filter((e) => e.data.previewId === preview.id);
    const perObject = new Map<string, number>();
    for (const e of intents) perObject.set(String(e.data.object), (perObject.get(String(e.data.object)) ?? 0) + 1);
    expect([...perObject.values()].every((n) => n === 1)).toBe(true);
    expect(intents.length).toBeGreaterThanOrEqual(deleted.length);
    expect(intents.length).toBeLessThanOrEqual(deleted.length + 1);
    // and it stays so
    await sleep(3000);
    expect([...liveProbes()].sort()).toEqual([...liveNow].sort());
  });
});
