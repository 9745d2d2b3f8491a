// The end of a freeze whose process dies mid-write-back (here: replica A's Git call and its heartbeat hang, as in
// a process stopped dead), taken over by replica B on the same database once A's claim has expired: B redoes the
// write-back exactly as recorded (branch, author, values) and only then restores the automation, with evidence of
// each step; when the redo fails, B restores nothing, the end stalls (evidence, and the freeze says so), no replica
// takes it again, and on-call ends it again. A, waking up, writes nothing more and reports truthfully what it did.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import {
  appOf,
  FakeFlux,
  LIVE_CHANGE_ID,
  oncall,
  replicaOf,
  TEST_TIMING,
  waitUntil,
} from '../../../test/support/freeze-fakes.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { HttpError } from '../http/errors.ts';
import type { FreezeServiceDeps, WriteBackOutcome } from './service.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-takeover-'));
const opened: EvidenceStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

type WriteBackReq = Parameters<NonNullable<FreezeServiceDeps['writeBack']>>[1];

/** A write-back that records each call and answers when the test says (or fails with `fail`). */
function scriptedGit() {
  const calls: WriteBackReq[] = [];
  let pending: Array<(o: WriteBackOutcome) => void> = [];
  const g = {
    calls,
    hang: true,
    fail: undefined as string | undefined,
    answer(o: WriteBackOutcome) {
      for (const p of pending) p(o);
      pending = [];
    },
    writeBack: (async (_a, req) => {
      calls.push(req);
      if (g.fail) throw new Error(g.fail);
      if (!g.hang) return { branch: req.branch, commit: 'b'.repeat(40), placements: [{ placed: true }] };
      return new Promise<WriteBackOutcome>((r) => pending.push(r));
    }) as NonNullable<FreezeServiceDeps['writeBack']>,
  };
  return g;
}

function setup(name: string) {
  const file = `${name}.sqlite`;
  const [evA, evB] = [SqliteEvidenceStore.open(dir, file), SqliteEvidenceStore.open(dir, file)];
  opened.push(evA, evB);
  const flux = new FakeFlux();
  flux.add(name);
  const app = appOf(name, { kind: 'GitRepository', url: 'https://git.example.com/team/app.git', path: 'overlay' });
  const gitA = scriptedGit();
  const gitB = scriptedGit();
  gitB.hang = false;
  const a = replicaOf({ name: 'replica-a', ev: evA, flux, apps: [app], writeBack: gitA.writeBack });
  const b = replicaOf({ name: 'replica-b', ev: evB, flux, apps: [app], writeBack: gitB.writeBack });
  const events = async () => (await evB.list({ limit: 500 })).filter((e) => e.data.freezeId !== undefined);
  return { flux, app, a, b, gitA, gitB, events, evB };
}

/** A stops dead: its heartbeat (and anything else it would write) never gets through */
function freeze(r: ReturnType<typeof replicaOf>) {
  r.store.renewClaim = () => new Promise<boolean>(() => undefined);
}

const outcomeOf = (all: EvidenceEvent[], intent: EvidenceEvent | undefined) =>
  all.find((e) => (e.type === 'action.completed' || e.type === 'action.failed') && e.data.intentSeq === intent?.seq);

describe('an end taken over from a process that died mid-write-back', () => {
  it('redoes the recorded write-back exactly, then restores, with evidence of each step; the stopped one gave up at half its claim and reports truthfully', async () => {
    const { flux, app, a, b, gitA, gitB, events, evB } = setup('redo');
    const f = await a.service.create(oncall, { cluster: 'c', app: app.id, reason: 'incident', minutes: 60 });
    await b.service.recover();
    let settledAt = 0;
    const ending = a.service
      .end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }])
      .catch((e: unknown) => e)
      .finally(() => (settledAt = Date.now()));
    await waitUntil("A's write-back under way", () => gitA.calls.length === 1);
    // B sees A's claim renewed: no takeover while A lives (three claim times)
    await new Promise((r) => setTimeout(r, 3 * TEST_TIMING.ttlMs));
    expect(gitB.calls).toEqual([]);
    expect((await b.store.get(f.id))?.claimedBy).toBe('replica-a');
    freeze(a);
    await new Promise((r) => setTimeout(r, TEST_TIMING.renewMs + 50));
    const lastClaimedUntil = Date.parse(String((await b.store.get(f.id))?.claimedUntil));
    await waitUntil('the end taken over and finished', async () => (await b.store.get(f.id))?.status === 'ended');
    const row = await b.store.get(f.id);
    // the redo: exactly A's decision (branch, author, values), marked as completed by the console
    expect(gitB.calls).toHaveLength(1);
    const [redo, orig] = [gitB.calls[0] as WriteBackReq, gitA.calls[0] as WriteBackReq];
    expect(redo.branch).toBe(`freeze/${f.id}`);
    expect(redo.branch).toBe(orig.branch);
    expect(redo.author).toBe('oncall');
    expect(redo.changes).toEqual(orig.changes);
    expect(redo.changes[0]).toMatchObject({ id: LIVE_CHANGE_ID, live: 5, git: 2 });
    expect(redo.message.startsWith(orig.message)).toBe(true);
    expect(redo.message).toMatch(/Completed-By: gitops-console \(replica-b/);
    // automation restored once, by B
    expect(flux.restores().map((p) => p.by)).toEqual(['replica-b']);
    expect(flux.suspended(app.name)).toBe(false);
    expect(row?.doc.writeBack?.map((w) => w.commit)).toEqual(['b'.repeat(40)]);
    expect(row?.endReason).toMatch(/^unfrozen \(finished after the process ending it stopped\)/);
    // the evidence, in order: the takeover, the redo and its outcome, the restore, the takeover's outcome
    const all = await events();
    const takeover = all.find((e) => e.type === 'freeze.ended' && e.data.takenOver === true);
    // not before A's claim had expired
    expect(Date.parse(String(takeover?.time))).toBeGreaterThanOrEqual(lastClaimedUntil);
    expect(takeover).toMatchObject({
      actor: 'console',
      data: { takenOverFrom: 'replica-a', redo: [`freeze/${f.id}`] },
    });
    const redoIntent = all.find((e) => e.type === 'freeze.write-back' && e.data.redo === true);
    expect(redoIntent?.data).toMatchObject({ onBehalfOf: 'oncall', takenOverFrom: 'replica-a' });
    const redone = outcomeOf(await evB.list({ limit: 500 }), redoIntent);
    expect(redone?.type).toBe('action.completed');
    const restored = all.find((e) => e.type === 'freeze.restored');
    expect(restored?.data.resumedAfterRestart).toBe(true);
    const seqs = [takeover?.seq, redoIntent?.seq, redone?.seq, restored?.seq].map(Number);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    // A could not renew its claim for half its time: it stopped waiting on Git and restored nothing, before B
    // could take the end over (issue 40: a write-back never outlives its claim), and says so truthfully
    const err = await ending;
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(503);
    expect(settledAt).toBeLessThan(Date.parse(String(takeover?.time)));
    const msg = (err as HttpError).message;
    expect(msg).toMatch(/could not renew its claim of the end of freeze frz-[0-9a-f]+ for over half its time/);
    expect(msg).toMatch(/Written back by this request: nothing confirmed/);
    expect(msg).toMatch(/Automation restored by this request: none/);
    // its Git answering late changes nothing
    gitA.answer({ branch: orig.branch, commit: 'a'.repeat(40), placements: [] });
    expect(flux.restores().map((p) => p.by)).toEqual(['replica-b']);
    expect((await b.store.get(f.id))?.doc.writeBack?.map((w) => w.commit)).toEqual(['b'.repeat(40)]);
    await a.service.settled();
    await b.service.settled();
  }, 30_000);

  it('a redo that fails restores nothing: the end stalls and says so, stays put, and on-call ends it again', async () => {
    const { flux, app, a, b, gitA, gitB, events } = setup('stall');
    const f = await a.service.create(oncall, { cluster: 'c', app: app.id, reason: 'incident', minutes: 60 });
    await b.service.recover();
    void a.service.end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }]).catch(() => undefined);
    await waitUntil("A's write-back under way", () => gitA.calls.length === 1);
    gitB.fail = 'pushing freeze/x to https://git.example.com/team/app.git failed: 503';
    freeze(a);
    await waitUntil('the end stalled', async () => Boolean((await b.store.get(f.id))?.doc.stall));
    const row = await b.store.get(f.id);
    expect(row?.status).toBe('ending');
    expect(row?.endReason).toMatch(
      /^end stalled: write-back could not be completed, automation NOT restored \(writing back stall to Git failed: pushing/,
    );
    expect(row?.claimToken).toBeNull();
    expect(flux.restores()).toEqual([]);
    expect(flux.suspended(app.name)).toBe(true);
    const all = await events();
    const takeover = all.find((e) => e.type === 'freeze.ended' && e.data.takenOver === true);
    const failed = outcomeOf(await b.recorder.store.list({ limit: 500 }), takeover);
    expect(failed).toMatchObject({ type: 'action.failed', data: { stalled: true } });
    expect(String(failed?.data.error)).toMatch(
      /end stalled: write-back could not be completed, automation NOT restored/,
    );
    // B watches it for two claim times (a look every watchMs): still stalled, not taken again, nothing restored
    const looks = b.counter.looks;
    await waitUntil(
      'B watched the stalled end for two claim times',
      () => (b.counter.looks - looks) * TEST_TIMING.watchMs >= 2 * TEST_TIMING.ttlMs,
    );
    expect(gitB.calls).toHaveLength(1);
    expect((await events()).filter((e) => e.type === 'freeze.ended')).toHaveLength(2);
    expect(flux.restores()).toEqual([]);
    // on-call ends it again once Git answers: a new branch, then the automation
    gitB.fail = undefined;
    const done = await b.service.end(f.id, oncall, [{ change: LIVE_CHANGE_ID, action: 'write-back' }]);
    expect(done.status).toBe('ended');
    expect(gitB.calls.at(-1)?.branch).toBe(`freeze/${f.id}-2`);
    expect(flux.restores().map((p) => p.by)).toEqual(['replica-b']);
    await a.service.settled();
    await b.service.settled();
  }, 30_000);

  it('an end left by an older console (decisions without their values) is not guessed at: it stalls', async () => {
    const { flux, app, a, b, gitB } = setup('legacy');
    const f = await a.service.create(oncall, { cluster: 'c', app: app.id, reason: 'incident', minutes: 60 });
    // what the console before claims left when it died: ending, the decisions, no claim, no recorded write-back
    expect(await a.store.transition(f.id, 'active', 'ending')).toBe(true);
    const row = await a.store.get(f.id);
    await a.store.update(f.id, 'ending', {
      doc: {
        ...(row?.doc as NonNullable<typeof row>['doc']),
        decisions: [{ change: LIVE_CHANGE_ID, action: 'write-back' }],
      },
    });
    // a replica whose clock is 100 s ahead: past the 90 s an end without a claim must have been idle
    const c = replicaOf({
      name: 'replica-c',
      ev: b.recorder.store,
      flux,
      apps: [app],
      writeBack: gitB.writeBack,
      aheadMs: 100_000,
    });
    await c.service.recover();
    await waitUntil('the end stalled', async () => Boolean((await c.store.get(f.id))?.doc.stall));
    expect((await c.store.get(f.id))?.endReason).toMatch(/recorded without the values to write back/);
    expect(gitB.calls).toEqual([]);
    expect(flux.restores()).toEqual([]);
    await a.service.settled();
    await b.service.settled();
    await c.service.settled();
  }, 30_000);
});
