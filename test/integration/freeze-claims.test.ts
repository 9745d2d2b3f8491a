// An end of a freeze on console replicas of one database (PostgreSQL), on a Flux app of the file's own whose Git the
// test controls (test/support/freeze-probe.ts): an end whose Git push stalls is never taken over while its process
// lives, and once that process is killed (SIGKILL) mid-write-back another replica redoes the recorded write-back
// before it restores the automation — or, when Git refuses, restores nothing and says the end stalled, and no
// replica takes the stalled end again. The claim of an end holds 3 s here (CONSOLE_FREEZE_CLAIM_SECONDS); "nothing
// happened" is watched for as long as a replica needs to take an end over: a claim time and two looks of its watch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { claimTiming } from '../../src/server/freeze/claim.ts';
import { sleep, waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { spawnBff } from '../support/bff-process.ts';
import { startFreezeProbe, type FreezeProbe } from '../support/freeze-probe.ts';
import type { Change, Freeze } from '../support/freeze-sandbox.ts';
import { startPostgres, type PgServer } from '../support/postgres.ts';

describe('an end on replicas of one database: a Git push that stalls, then a SIGKILL mid-write-back', () => {
  type Bff = Awaited<ReturnType<typeof spawnBff>>;
  /** the claim of an end holds 3 s unless renewed (the console's default is 30 s) */
  const CLAIM_S = 3;
  /**
   * How long a replica takes at most to take over an end whose claim stopped being renewed: it watches the ends
   * every `watchMs`, and takes one whose claim it saw unchanged for a claim time (and past its expiry), so a claim
   * time and two looks; and a second more to record it.
   */
  const TAKEOVER_MS = CLAIM_S * 1000 + 2 * claimTiming(CLAIM_S * 1000).watchMs + 1000;
  let pg: PgServer | undefined;
  let probe: FreezeProbe;
  const bffs: Bff[] = [];
  /** `a` ends a freeze and is killed in the first test, `a2` in the second; `b` watches, and finishes them */
  let a: Bff;
  let b: Bff;
  let a2: Bff;
  let env: Record<string, string>;
  /** on-call signed in on each replica (each has its own accounts file, so its own account ids) */
  const on = new Map<Bff, Signed>();
  const oncallOn = (b: Bff) => on.get(b) as Signed;

  const spawn = async (name: string) => {
    const b = await spawnBff(name, { env });
    bffs.push(b);
    on.set(b, await signIn(b.base, 'oncall'));
    await waitFor(
      `${name} sees the probe app`,
      async () =>
        ((await as(b.admin, b.base, `/api/apps/${probe.appId}`)).body as { app?: { source?: { url?: string } } }).app
          ?.source?.url === probe.repoUrl,
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    return b;
  };
  const suspended = () => probe.suspended();
  const view = async (via: Bff, id: string) =>
    (
      (await as(oncallOn(via), via.base, `/api/freezes/${id}`)).body as {
        freeze: Freeze & { endReason: string | null };
      }
    ).freeze;
  const events = async (via: Bff, type: string, id: string) =>
    (
      (await as(oncallOn(via), via.base, `/api/evidence?type=${type}&limit=1000`)).body as { events: EvidenceEvent[] }
    ).events
      .filter((e) => e.data.freezeId === id)
      .sort((a, b) => a.seq - b.seq);
  const outcomes = async (via: Bff) =>
    (
      (await as(oncallOn(via), via.base, '/api/evidence?type=action.completed&limit=1000')).body as {
        events: EvidenceEvent[];
      }
    ).events;
  const failures = async (via: Bff) =>
    (
      (await as(oncallOn(via), via.base, '/api/evidence?type=action.failed&limit=1000')).body as {
        events: EvidenceEvent[];
      }
    ).events;

  /** a freeze through `via`, a hand edit of the probe's ConfigMap, and that live change as the console lists it */
  async function freezeWithEdit(via: Bff, mode: string): Promise<{ id: string; change: Change }> {
    const r = await as(oncallOn(via), via.base, '/api/freezes', {
      method: 'POST',
      body: { cluster: 'prod', app: probe.appId, reason: 'claim test', minutes: 30 },
    });
    expect(r.status, r.text).toBe(200);
    const id = (r.body as { freeze: Freeze }).freeze.id;
    expect(suspended()).toBe(true);
    // as on-call is told: edit once the controller confirmed the pause (a reconcile it began before the freeze,
    // e.g. of an earlier test's restore, would revert the edit)
    await waitFor(
      'the controller’s pause confirmed',
      async () => (await view(via, id)).targets[0]?.controllerPause?.confirmed !== undefined,
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    probe.editMode(mode);
    let change: Change | undefined;
    let last = '';
    await waitFor(
      'the live change listed',
      async () => {
        const c = await as(oncallOn(via), via.base, `/api/freezes/${id}/changes`);
        last = `${c.status} ${c.text.slice(0, 1500)} (live: ${probe.liveMode()})`;
        change = (c.body as { changes?: Change[] }).changes?.find((x) => x.path === 'data.mode' && x.live === mode);
        return change !== undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; the last answer: ${last}`);
    });
    return { id, change: change as Change };
  }

  /** `check` passes at every look (each 500 ms) for `ms`: nothing happened meanwhile, or the first look says what */
  async function holdsFor(ms: number, check: () => Promise<void>): Promise<void> {
    const until = Date.now() + ms;
    do {
      await check();
      await sleep(500);
    } while (Date.now() < until);
    await check();
  }

  /**
   * The end sent to `ender`, whose push the Git server holds; the other replicas watch the end for as long as they
   * take to take a dead one over and do not take it (the claim is renewed while the push is held); then `ender` is
   * killed with SIGKILL (with its git child: its connection dropped).
   */
  async function killMidWriteBack(ender: Bff, watcher: Bff, id: string, change: Change) {
    probe.git.only = 'push';
    probe.git.mode = 'stall';
    void as(oncallOn(ender), ender.base, `/api/freezes/${id}/end`, {
      method: 'POST',
      body: { decisions: [{ change: change.id, action: 'write-back' }] },
    }).catch(() => undefined);
    await waitFor('the push held by the Git server', async () => probe.git.holding > 0, { timeoutMs: 60_000 });
    await holdsFor(TAKEOVER_MS, async () => {
      expect((await view(watcher, id)).status).toBe('ending');
      expect(suspended()).toBe(true);
      expect((await events(watcher, 'freeze.ended', id)).map((e) => e.actor)).toEqual(['oncall']);
    });
    ender.child.kill('SIGKILL');
    await new Promise((r) =>
      ender.child.exitCode !== null || ender.child.signalCode ? r(null) : ender.child.once('exit', r),
    );
    probe.git.drop();
  }

  beforeAll(async () => {
    [pg, probe] = await Promise.all([startPostgres(), startFreezeProbe('prod', 'prod')]);
    env = { DATABASE_URL: pg.url, CONSOLE_RELEASE_RECORDER: 'off', CONSOLE_FREEZE_CLAIM_SECONDS: String(CLAIM_S) };
    // the first creates the schema; then the others at once (the third ends a freeze in the second test)
    a = await spawn('freeze-a');
    [b, a2] = await Promise.all([spawn('freeze-b'), spawn('freeze-a-again')]);
  }, 400_000);

  afterAll(async () => {
    try {
      for (const b of bffs) if (b.child.exitCode === null && b.child.signalCode === null) await b.stop();
      await probe?.remove();
    } finally {
      for (const b of bffs) rmSync(b.dataDir, { recursive: true, force: true });
      await pg?.stop();
    }
  }, 120_000);

  it('the end of the killed replica is taken over once its claim expires: the write-back redone, then the automation restored', async () => {
    const { id, change } = await freezeWithEdit(a, 'incident-fix');
    await killMidWriteBack(a, b, id, change);
    // nothing was pushed by the dead replica
    expect(probe.git.branches('probe')).toEqual(['main']);
    probe.git.mode = 'serve';
    let f: Freeze & { endReason: string | null } = await view(b, id);
    // within a claim time and a few seconds; a long wait, so that a console taking over later fails below instead
    await waitFor('the end finished by another replica', async () => (f = await view(b, id)).status === 'ended', {
      timeoutMs: 150_000,
      intervalMs: 500,
    });
    // the write-back redone as decided: the branch holds the on-call's live value
    const wb = f.writeBack?.[0];
    expect(wb?.branch).toBe(`freeze/${id}`);
    expect(probe.git.branches('probe')).toContain(`freeze/${id}`);
    expect(probe.git.show('probe', `freeze/${id}`, 'probe/configmap.yaml')).toMatch(/mode: incident-fix/);
    expect(probe.git.show('probe', `freeze/${id}`, 'probe/configmap.yaml')).not.toMatch(/mode: normal/);
    // then the automation restored
    expect(suspended()).toBe(false);
    expect(f.endReason).toMatch(/finished after the process ending it stopped/);
    // evidence of each step, in order: the takeover, the redo, its outcome, the restore
    const ended = await events(b, 'freeze.ended', id);
    const takeover = ended.find((e) => e.data.takenOver === true);
    expect(String(takeover?.data.takenOverFrom)).toMatch(new RegExp(`:${a.child.pid}$`));
    const redo = (await events(b, 'freeze.write-back', id)).find((e) => e.data.redo === true);
    expect(redo).toMatchObject({ actor: 'console', data: { onBehalfOf: 'oncall', branch: `freeze/${id}` } });
    const redone = (await outcomes(b)).find((e) => e.data.intentSeq === redo?.seq);
    expect(redone?.data.commit).toBe(wb?.commit);
    const restored = await events(b, 'freeze.restored', id);
    expect(restored).toHaveLength(1);
    expect(restored[0]?.data.resumedAfterRestart).toBe(true);
    const order = [takeover?.seq, redo?.seq, redone?.seq, restored[0]?.seq].map(Number);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
  }, 300_000);

  it('a redo that Git refuses restores nothing: the end stalls and says so; on-call ends it again', async () => {
    const { id, change } = await freezeWithEdit(a2, 'incident-fix-2');
    await killMidWriteBack(a2, b, id, change);
    probe.git.only = 'all';
    probe.git.mode = 'refuse';
    let f = await view(b, id);
    await waitFor('the end stalled', async () => /^end stalled/.test((f = await view(b, id)).endReason ?? ''), {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(f.endReason).toMatch(/^end stalled: write-back could not be completed, automation NOT restored \(/);
    expect(f.status).toBe('ending');
    expect(suspended()).toBe(true);
    const takeover = (await events(b, 'freeze.ended', id)).find((e) => e.data.takenOver === true);
    const failed = (await failures(b)).find((e) => e.data.intentSeq === takeover?.seq);
    expect(failed?.data.stalled).toBe(true);
    expect(await events(b, 'freeze.restored', id)).toEqual([]);
    // it stays so: no replica takes a stalled end again
    await holdsFor(TAKEOVER_MS, async () => {
      expect(suspended()).toBe(true);
      expect((await events(b, 'freeze.ended', id)).filter((e) => e.data.takenOver === true)).toHaveLength(1);
    });
    // on-call ends it again once Git answers: a new branch, then the automation
    probe.git.mode = 'serve';
    const again = await as(oncallOn(b), b.base, `/api/freezes/${id}/end`, {
      method: 'POST',
      body: { decisions: [{ change: change.id, action: 'write-back' }] },
    });
    expect(again.status, again.text).toBe(200);
    const done = (again.body as { freeze: Freeze }).freeze;
    expect(done.status).toBe('ended');
    expect(done.writeBack?.at(-1)?.branch).toBe(`freeze/${id}-2`);
    expect(probe.git.show('probe', `freeze/${id}-2`, 'probe/configmap.yaml')).toMatch(/mode: incident-fix-2/);
    expect(suspended()).toBe(false);
  }, 300_000);
});
