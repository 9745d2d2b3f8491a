// Intent only for what may happen, for freeze start and extend (in-memory apiserver, real SQLite evidence store):
// a freeze refused by a check that needs no write — an app another freeze holds (its claim in the store, whether or
// not its object still says so), an app object that cannot be frozen, a freeze that is no longer active — is one
// `action.refused` record naming the action and the reason, never a `freeze.started` / `freeze.extended` followed by
// `action.failed`; the same refusal repeated within a minute is counted, not appended. A race lost after the intent
// (the store's claim inside the action) is still `action.failed`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { appOf, FakeFlux, noLiveChanges, oncall, replicaOf, soloReplica } from '../../../test/support/freeze-fakes.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { HttpError } from '../http/errors.ts';
import { FreezeService } from './service.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-start-'));
const services: FreezeService[] = [];
const opened: EvidenceStore[] = [];
afterEach(() => vi.useRealTimers());
afterAll(async () => {
  for (const s of services) await s.settled();
  for (const e of opened) await e.close();
  rmSync(dir, { recursive: true, force: true });
});

type Obj = Record<string, unknown>;

function setup(names: string[]) {
  const { flux, service, store, events } = soloReplica(dir, names, { opened, services });
  /** the app object resumed by hand and its freeze annotations dropped (the claim in the store stays) */
  const resumeByHand = (name: string) => {
    const o = flux.objects.get(name) as { metadata: Obj; spec: Obj };
    o.metadata.annotations = {};
    delete o.spec.suspend;
  };
  return { flux, service, store, events, resumeByHand };
}

const freezeOf = (name: string, reason = 'incident') => ({
  cluster: 'c',
  app: appOf(name).id,
  reason,
  minutes: 10,
});
const refusal = (s: ReturnType<typeof setup>['service'], input: Parameters<FreezeService['create']>[1]) =>
  s.create(oncall, input).then(
    () => {
      throw new Error('the freeze was not refused');
    },
    (e: unknown) => e as HttpError,
  );

describe('freeze start: a refused attempt is one action.refused, never a freeze.started', () => {
  it('a second freeze of a frozen app: 409, one action.refused naming the holder; repeated, still one (counted)', async () => {
    const { service, events } = setup(['a']);
    const f = await service.create(oncall, freezeOf('a'));
    for (let i = 0; i < 3; i++) {
      const err = await refusal(service, freezeOf('a', 'again'));
      expect(err).toBeInstanceOf(HttpError);
      expect(err.status).toBe(409);
      expect(err.message).toMatch(new RegExp(`already frozen \\(freeze ${f.id}\\): extend it instead`));
    }
    expect((await events('freeze.started')).map((e) => e.data.freezeId)).toEqual([f.id]);
    expect(await events('action.failed')).toEqual([]);
    const refused = await events('action.refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      actor: 'oncall',
      app: appOf('a').id,
      cluster: 'c',
      env: 'prod',
      data: { action: 'freeze.started', apps: [appOf('a').id] },
    });
    expect(String(refused[0]?.data.reason)).toContain(`already frozen (freeze ${f.id})`);
    // counted: the next record of the same refusal, after the minute, carries the two not appended
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    expect((await refusal(service, freezeOf('a'))).status).toBe(409);
    const after = await events('action.refused');
    expect(after).toHaveLength(2);
    expect(after[1]?.data.repeatedSinceLastRecord).toBe(2);
    expect(await events('freeze.started')).toHaveLength(1);
  });

  it('the claim decides, not the object: an app resumed by hand while frozen is refused before the intent', async () => {
    const { service, events, resumeByHand, flux } = setup(['a']);
    const f = await service.create(oncall, freezeOf('a'));
    resumeByHand('a');
    const patches = flux.patches.length;
    const err = await refusal(service, freezeOf('a', 'freeze it again'));
    expect(err.status).toBe(409);
    expect(err.message).toContain(`already frozen (freeze ${f.id})`);
    expect(flux.patches).toHaveLength(patches);
    expect((await events('freeze.started')).map((e) => e.data.freezeId)).toEqual([f.id]);
    expect(await events('action.failed')).toEqual([]);
    expect((await events('action.refused')).map((e) => e.data.action)).toEqual(['freeze.started']);
  });

  it('an app that cannot be frozen (suspended outside the console): 409 and one action.refused', async () => {
    const { service, events, flux } = setup(['a']);
    ((flux.objects.get('a') as Obj).spec as Obj).suspend = true;
    const err = await refusal(service, freezeOf('a'));
    expect(err.status).toBe(409);
    expect(err.message).toMatch(/cannot freeze a: already suspended outside the console/);
    expect(await events('freeze.started')).toEqual([]);
    const refused = await events('action.refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.data).toMatchObject({ action: 'freeze.started', reason: err.message });
  });

  it('an environment with one app held by another freeze: the others are frozen, the held one is named', async () => {
    const { service, events, resumeByHand, flux } = setup(['a', 'b', 'c']);
    const first = await service.create(oncall, freezeOf('b'));
    resumeByHand('b');
    const f = await service.create(oncall, { cluster: 'c', env: 'prod', reason: 'env incident', minutes: 10 });
    expect(f.doc.targets.map((t) => t.appId).sort()).toEqual([appOf('a').id, appOf('c').id]);
    expect(flux.suspended('a') && flux.suspended('c')).toBe(true);
    expect(flux.suspended('b')).toBe(false);
    const started = (await events('freeze.started')).find((e) => e.data.freezeId === f.id);
    expect(started?.data.notFrozen).toEqual([`b: already frozen (freeze ${first.id}): extend it instead`]);
    expect(await events('action.failed')).toEqual([]);
  });

  it('a race lost after the intent (another freeze claimed the app in between) is still action.failed', async () => {
    const { service, store, events, resumeByHand } = setup(['a']);
    const f = await service.create(oncall, freezeOf('a'));
    resumeByHand('a');
    // the claims as read before the other freeze took the app (the race): the store's claim inside the action refuses
    store.claims = async () => new Map();
    const err = await refusal(service, freezeOf('a'));
    expect(err.status).toBe(409);
    expect(err.message).toMatch(new RegExp(`already frozen: ${appOf('a').id} by ${f.id}`));
    expect(await events('freeze.started')).toHaveLength(2);
    expect((await events('action.failed')).map((e) => e.data.action)).toEqual(['freeze.started']);
    expect(await events('action.refused')).toEqual([]);
  });
});

describe('freeze start: the prior the intent records is the object as the apiserver has it', () => {
  it('one app: read from the apiserver, not from an informer copy that lags a change made a moment ago', async () => {
    const flux = new FakeFlux();
    flux.add('a');
    // the informers' copy from before someone set an annotation the freeze stores (and restores)
    const cache = new Map([['a', structuredClone(flux.objects.get('a') as Obj)]]);
    const live = flux.objects.get('a') as { metadata: Obj };
    live.metadata.annotations = { 'fluxcd.controlplane.io/suspendedBy': 'someone' };
    flux.statusWrite('a');
    const ev = SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
    opened.push(ev);
    const { service } = replicaOf({ name: 'console', ev, flux, apps: [appOf('a')], diff: noLiveChanges, cache });
    services.push(service);
    const f = await service.create(oncall, freezeOf('a'));
    const prior = f.doc.targets[0]?.prior as { annotations: Record<string, string | null> };
    expect(prior.annotations['fluxcd.controlplane.io/suspendedBy']).toBe('someone');
    expect(flux.suspended('a')).toBe(true);
  });
});

describe('freeze extend: a freeze that is not active', () => {
  it('extending an ended freeze: 409 and one action.refused (repeated: still one), no freeze.extended', async () => {
    const { service, events } = setup(['a']);
    const f = await service.create(oncall, freezeOf('a'));
    await service.end(f.id, oncall, []);
    for (let i = 0; i < 3; i++) {
      const err = await service
        .extend(f.id, oncall, { minutes: 30, reason: 'longer' })
        .catch((e: unknown) => e as HttpError);
      expect(err).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(409);
      expect((err as HttpError).message).toBe(`freeze ${f.id} is ended: it cannot be extended`);
    }
    expect(await events('freeze.extended')).toEqual([]);
    const refused = await events('action.refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      actor: 'oncall',
      app: appOf('a').id,
      env: 'prod',
      data: { action: 'freeze.extended', freezeId: f.id, reason: `freeze ${f.id} is ended: it cannot be extended` },
    });
  });

  it('an active freeze is extended as before: its intent, no refusal', async () => {
    const { service, events } = setup(['a']);
    const f = await service.create(oncall, freezeOf('a'));
    const g = await service.extend(f.id, oncall, { minutes: 30, reason: 'longer' });
    expect(g.doc.extensions).toHaveLength(1);
    expect((await events('freeze.extended')).map((e) => e.data.freezeId)).toEqual([f.id]);
    expect(await events('action.refused')).toEqual([]);
  });
});

describe('freeze end: a freeze that is not active', () => {
  it('ending an ended freeze: 409 and one action.refused (repeated: still one), no second freeze.ended', async () => {
    const { service, events } = setup(['a']);
    const f = await service.create(oncall, freezeOf('a'));
    await service.end(f.id, oncall, []);
    const endedBefore = (await events('freeze.ended')).length;
    for (let i = 0; i < 3; i++) {
      const err = await service.end(f.id, oncall, []).catch((e: unknown) => e as HttpError);
      expect(err).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(409);
      expect((err as HttpError).message).toBe(`freeze ${f.id} is ended`);
    }
    expect(await events('freeze.ended')).toHaveLength(endedBefore);
    expect(await events('action.failed')).toEqual([]);
    const refused = await events('action.refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      actor: 'oncall',
      app: appOf('a').id,
      data: { action: 'freeze.ended', freezeId: f.id, reason: `freeze ${f.id} is ended` },
    });
  });
});

describe('freeze start: whether the Flux controller handled the suspend', () => {
  it('the suspend carries a reconcile request; the pause is confirmed once the controller echoes it, not before', async () => {
    const { flux, service } = setup(['p']);
    const f = await service.create(oncall, freezeOf('p'));
    const requested = flux.annotations('p')['reconcile.fluxcd.io/requestedAt'];
    expect(typeof requested).toBe('string');
    const pauseOf = async () => (await service.view(f.id)).doc.targets[0]?.controllerPause;
    expect(await pauseOf()).toEqual({ requested });
    // a status write that does not echo it (a reconcile that read the object before the suspend): still pending
    flux.statusWrite('p');
    await service.observe(appOf('p').id, false);
    expect((await pauseOf())?.confirmed).toBeUndefined();
    flux.handleReconcile('p');
    await service.observe(appOf('p').id, false);
    expect(await pauseOf()).toEqual({ requested, confirmed: expect.any(String) });
  });

  it('an echo that came before the freeze was stored is seen on the informers’ copy when the start finishes', async () => {
    const { flux, service } = setup(['q']);
    // the controller handles the object at once, before the start writes the row (no observe() afterwards)
    const patch = flux.conn().json.bind(flux.conn());
    flux.conn = () =>
      ({
        json: async (method: string, path: string, opts?: { body?: string }) => {
          const out = (await patch(method, path, opts)) as unknown;
          if (method === 'PATCH') flux.handleReconcile('q');
          return out;
        },
      }) as unknown as ReturnType<FakeFlux['conn']>;
    const f = await service.create(oncall, freezeOf('q'));
    expect(f.doc.targets[0]?.controllerPause?.confirmed).toEqual(expect.any(String));
  });
});
