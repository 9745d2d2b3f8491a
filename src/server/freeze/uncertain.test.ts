// A freeze patch the cluster never answered (a stopped apiserver holding it) is settled before the start records
// anything: applied ⇒ the freeze stands; fenced before it could apply ⇒ failed, nothing changed, even when the
// held patch comes afterwards; still unknown at the deadline ⇒ the freeze is kept, named unconfirmed, and can be
// ended. The same for the pause of the app's Rollouts. (In-memory apiserver that holds a PATCH and applies it
// later; real SQLite evidence store.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appOf, type FakeFlux, oncall, soloReplica, waitUntil } from '../../../test/support/freeze-fakes.ts';
import type { App } from '../../domain/app.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import type { FreezeService } from './service.ts';
import { FENCE_ANNOTATION, type SettleOpts } from './uncertain.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-uncertain-'));
const services: FreezeService[] = [];
const opened: EvidenceStore[] = [];
afterAll(async () => {
  for (const s of services) await s.settled();
  for (const e of opened) await e.close();
  rmSync(dir, { recursive: true, force: true });
});

const setup = (settle: (flux: FakeFlux) => SettleOpts, names = ['a'], inventory?: Record<string, App['inventory']>) =>
  soloReplica(dir, names, { opened, services }, { settle, minSeconds: 1, ...(inventory ? { inventory } : {}) });
/** app `a` manages the Rollout prod/web (the freeze pauses it, the end puts it back) */
const withRollout = {
  a: [{ cluster: 'c', group: 'argoproj.io', version: 'v1alpha1', kind: 'Rollout', namespace: 'prod', name: 'web' }],
};
const freezeA = { cluster: 'c', app: appOf('a').id, reason: 'incident', minutes: 10 };

describe('a freeze patch without an answer is settled before the start records its outcome', () => {
  it('applied while the console waited: the freeze stands, completed, and ends as usual', async () => {
    // the apiserver is unreachable for one read, then continues and applies the held patch
    const { flux, service, events } = setup((f) => ({ pause: async () => f.applyLate(), deadlineMs: 5000 }));
    flux.hang.add('a');
    flux.readsFailingAfterHang = 1;
    const f = await service.create(oncall, freezeA);
    expect(flux.suspended('a')).toBe(true);
    expect(f.status).toBe('active');
    expect(f.doc.targets[0]?.applied).toBe(true);
    expect(f.doc.targets[0]?.interference).toBeUndefined();
    const completed = await events('action.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]?.data.unconfirmed).toBeUndefined();
    expect(await events('action.failed')).toEqual([]);
    await service.end(f.id, oncall, []);
    expect(flux.suspended('a')).toBe(false);
  });

  it('not applied yet: fenced at the version it named, recorded failed; the held patch, when it comes, is refused', async () => {
    const { flux, service, events } = setup(() => ({ deadlineMs: 5000 }));
    flux.hang.add('a');
    const err = (await service.create(oncall, freezeA).catch((e: unknown) => e)) as { status?: number };
    expect(err.status).toBe(502);
    // the fence came and went: a newer version, no fence annotation left
    expect(flux.annotations('a')[FENCE_ANNOTATION]).toBeUndefined();
    flux.applyLate();
    expect(flux.suspended('a')).toBe(false);
    expect(await events('action.failed')).toHaveLength(1);
    expect(await service.list(true)).toEqual([]);
    // the claim went with the failed freeze: a new one starts
    const again = await service.create(oncall, { ...freezeA, reason: 'again' });
    expect(again.status).toBe('active');
    expect(flux.suspended('a')).toBe(true);
  });

  it('a refused connection sent nothing: failed at once, no read-back, nothing kept', async () => {
    const { flux, service, events } = setup(() => ({ deadlineMs: 5000 }));
    flux.refuseConnection.add('a');
    const reads = flux.reads;
    const err = (await service.create(oncall, freezeA).catch((e: unknown) => e)) as { status?: number };
    expect(err.status).toBe(502);
    expect(flux.reads - reads).toBe(1); // the start's own read of the object, none after the patch
    expect(await events('action.failed')).toHaveLength(1);
    expect(await service.list(true)).toEqual([]);
  });

  it('a restore the cluster never answered is made again once it answers: the freeze ends, restored once for good', async () => {
    const { flux, service, events } = setup(() => ({ deadlineMs: 5000, pause: async () => undefined }));
    const f = await service.create(oncall, freezeA);
    flux.hang.add('a');
    flux.readsFailingAfterHang = 2;
    const ended = await service.end(f.id, oncall, []);
    expect(ended.status).toBe('ended');
    expect(flux.suspended('a')).toBe(false);
    flux.applyLate(); // the held restore lands afterwards: the same values
    expect(flux.suspended('a')).toBe(false);
    expect(await events('action.failed')).toEqual([]);
  });

  it('still unknown at the deadline: the freeze is kept, unconfirmed, and ending it restores what the late patch did', async () => {
    let t = 0;
    const { flux, service, events } = setup(() => ({ deadlineMs: 3000, now: () => t, pause: async (ms) => (t += ms) }));
    flux.hang.add('a');
    flux.readsFailingAfterHang = 1000;
    const f = await service.create(oncall, freezeA);
    expect(f.status).toBe('active');
    expect(f.doc.targets[0]?.interference?.state).toBe('unconfirmed');
    expect(f.doc.targets[0]?.interference?.message).toMatch(/did not answer whether the freeze took effect/);
    const completed = await events('action.completed');
    expect(completed[0]?.data.unconfirmed).toEqual([appOf('a').id]);
    // the apiserver continues: the held patch applies; on-call ends the freeze and Flux reconciles again
    flux.unreachableReads = 0;
    flux.applyLate();
    expect(flux.suspended('a')).toBe(true);
    await service.end(f.id, oncall, []);
    expect(flux.suspended('a')).toBe(false);
    expect(await service.list(true)).toEqual([]);
  });

  it('one patch unanswered, another refused: kept for the unanswered one, named in the error, and it still expires', async () => {
    let t = 0;
    const { flux, service } = setup(
      () => ({ deadlineMs: 3000, now: () => t, pause: async (ms) => (t += ms) }),
      ['a', 'b'],
    );
    flux.hang.add('a');
    flux.readsFailingAfterHang = 1000;
    flux.refuseConnection.add('b');
    const input = { cluster: 'c', env: 'prod', reason: 'incident', seconds: 1 };
    const err = (await service.create(oncall, input).catch((e: unknown) => e)) as { status?: number; message?: string };
    expect(err.status).toBe(502);
    expect(err.message).toMatch(/freeze \S+ is kept: the cluster did not answer whether it froze a \(end it/);
    const [kept] = await service.list(true);
    expect(kept?.doc.targets.map((x) => [x.name, x.interference?.state ?? null])).toEqual([
      ['a', 'unconfirmed'],
      ['b', null],
    ]);
    // the apiserver answers again and takes the held patch; the freeze's own expiry restores it
    flux.refuseConnection.delete('b');
    flux.readsFailingAfterHang = 0;
    flux.unreachableReads = 0;
    flux.applyLate();
    expect(flux.suspended('a')).toBe(true);
    await waitUntil('the kept freeze expired', async () => (await service.list(true)).length === 0, 5000);
    expect(flux.suspended('a')).toBe(false);
    expect(flux.suspended('b')).toBe(false);
  });

  it("a Rollout's pause without an answer, turned away by a fence: paused again, and the late copy is refused", async () => {
    const { flux, service, events } = setup(
      () => ({ deadlineMs: 5000, pause: async () => undefined }),
      ['a'],
      withRollout,
    );
    flux.addRollout('web', false);
    flux.hangRollout.add('web');
    const f = await service.create(oncall, freezeA);
    expect(f.status).toBe('active');
    expect(f.doc.targets[0]?.interference).toBeUndefined();
    expect(flux.rolloutPaused('web')).toBe(true);
    expect(flux.rollouts.get('web')?.metadata).not.toHaveProperty(['annotations', FENCE_ANNOTATION]);
    expect(await events('action.completed')).toHaveLength(1);
    // the held pause comes now: it names a version long gone, so nothing changes; the end puts the Rollout back
    flux.applyLate();
    await service.end(f.id, oncall, []);
    expect(flux.rolloutPaused('web')).toBe(false);
    expect(flux.suspended('a')).toBe(false);
  });

  it("a Rollout's pause still unknown at the deadline: the freeze is kept, unconfirmed; its end puts the Rollout back", async () => {
    let t = 0;
    const { flux, service, events } = setup(
      () => ({ deadlineMs: 3000, now: () => t, pause: async (ms) => (t += ms) }),
      ['a'],
      withRollout,
    );
    flux.addRollout('web', false);
    flux.hangRollout.add('web');
    // the apiserver stays stopped for the rest of the deadline: the pause cannot be read back
    flux.rolloutReadsFailingAfterHang = 1000;
    const f = await service.create(oncall, freezeA);
    expect(f.status).toBe('active');
    expect(f.doc.targets[0]?.interference).toMatchObject({ state: 'unconfirmed' });
    expect(f.doc.targets[0]?.interference?.message).toMatch(/did not answer whether Rollout web was paused/);
    expect((await events('action.completed'))[0]?.data.unconfirmed).toEqual([appOf('a').id]);
    // the held pause applies after all; on-call ends the freeze: the Rollout as it was before
    flux.unreachableRolloutReads = 0;
    flux.applyLate();
    expect(flux.rolloutPaused('web')).toBe(true);
    await service.end(f.id, oncall, []);
    expect(flux.rolloutPaused('web')).toBe(false);
  });

  it('an Argo CD freeze patch applied late on a CRD that prunes automated.enabled: paused by removing automated', async () => {
    let t = 0;
    const argo = (name: string): App => ({
      ...appOf(name),
      controller: 'argocd',
      kind: 'Application',
      namespace: 'argocd',
    });
    const { flux, service, events } = soloReplica(
      dir,
      ['a'],
      { opened, services },
      { settle: () => ({ deadlineMs: 3000, now: () => t, pause: async (ms) => (t += ms) }), appOf: argo },
    );
    flux.objects.set('a', {
      metadata: { name: 'a', namespace: 'argocd', resourceVersion: '100', annotations: {} },
      spec: { syncPolicy: { automated: { prune: true, selfHeal: true } } },
    });
    flux.pruneArgoEnabled = true;
    flux.hang.add('a');
    flux.readsFailingAfterHang = 1000;
    const f = await service.create(oncall, { cluster: 'c', app: argo('a').id, reason: 'incident', minutes: 10 });
    expect(f.doc.targets[0]?.interference?.state).toBe('unconfirmed');
    // the held patch applies: the freeze's annotations, and `automated` without the pruned flag (not paused)
    flux.unreachableReads = 0;
    flux.applyLate();
    const spec = () => (flux.objects.get('a')?.spec as { syncPolicy: { automated?: unknown } }).syncPolicy;
    expect(spec().automated).toEqual({ prune: true, selfHeal: true });
    await service.observe(argo('a').id, false);
    // paused by removal, the pause no longer unconfirmed, and no "resumed directly" on record
    expect(spec()).not.toHaveProperty('automated');
    const [kept] = await service.list(true);
    expect(kept?.doc.targets[0]?.interference).toBeUndefined();
    expect(kept?.doc.targets[0]?.prior).toMatchObject({ controller: 'argocd', shape: 'removed' });
    expect(await events('freeze.interfered')).toEqual([]);
    // the end gives the sync policy back exactly
    await service.end(f.id, oncall, []);
    expect(spec()).toEqual({ automated: { prune: true, selfHeal: true } });
  });
});
