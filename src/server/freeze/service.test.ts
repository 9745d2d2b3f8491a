// The freeze service's failure paths against an in-memory apiserver for Kustomizations and a real SQLite
// evidence store: a freeze whose intent cannot be recorded patches nothing; a freeze of an environment that
// the cluster refuses half-way (403 / 409) undoes what it did and releases its claims; the end restores each
// app exactly even after the apps changed status meanwhile; an expiry retries after a failed restore. The
// happy paths run against the real sandbox in test/integration/freeze*.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appOf, FakeFlux, noLiveChanges, oncall, replicaOf } from '../../../test/support/freeze-fakes.ts';
import { FREEZE_ANNOTATIONS } from '../../domain/freeze.ts';
import { HttpError } from '../http/errors.ts';
import { FreezeService } from './service.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Obj = Record<string, unknown>;

const app = (name: string) => appOf(name, {}, 'dev');

function setup(names: string[], store?: EvidenceStore) {
  const flux = new FakeFlux();
  for (const n of names) flux.add(n);
  const ev = store ?? SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  const { service, store: freezes } = replicaOf({
    name: 'console',
    ev,
    flux,
    apps: names.map(app),
    diff: noLiveChanges,
  });
  return { flux, ev, service, freezes };
}

describe('freeze service', () => {
  it('evidence fails closed: when the intent cannot be written, nothing is patched and nothing is stored', async () => {
    const sub = mkdtempSync(join(dir, 'ro-'));
    const ev = SqliteEvidenceStore.open(sub, 'e.sqlite');
    const { flux, service, freezes } = setup(['a'], ev);
    // the store refuses every append (a failing disk): the recorder cannot record the intent
    (ev as unknown as { append: () => Promise<never> }).append = async () => {
      throw new Error('SQLITE_IOERR_WRITE');
    };
    const err = await service
      .create(oncall, { cluster: 'c', app: app('a').id, reason: 'incident', minutes: 10 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(503);
    expect(flux.patches).toEqual([]);
    expect(await freezes.list({ active: true })).toEqual([]);
    await service.settled();
  });

  it('an environment refused half-way by the cluster is undone: nothing stays frozen, the claims are released', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
    const { flux, service, freezes, ev } = setup(names);
    flux.refuse.set('g', 403);
    const err = await service
      .create(oncall, { cluster: 'c', env: 'dev', reason: 'incident', minutes: 10 })
      .catch((e: unknown) => e);
    expect((err as HttpError).status).toBe(403);
    for (const n of names) {
      expect(flux.suspended(n), n).not.toBe(true);
      expect(flux.annotations(n)[FREEZE_ANNOTATIONS.id], n).toBeUndefined();
    }
    const all = await freezes.list();
    expect(all.map((f) => f.status)).toEqual(['failed']);
    expect(await freezes.claimOf(app('a').id)).toBeUndefined();
    // the intent and its failed outcome are both in the chain
    const events = await ev.list({ limit: 50 });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['freeze.started', 'action.failed']));
    // and the same apps can be frozen once the cluster allows it
    flux.refuse.clear();
    const f = await service.create(oncall, { cluster: 'c', env: 'dev', reason: 'incident', minutes: 10 });
    expect(f.doc.targets.every((t) => t.applied)).toBe(true);
    expect(names.every((n) => flux.suspended(n) === true)).toBe(true);
    await service.settled();
  });

  it('a status write between read and patch is retried; a change of the automation is a conflict', async () => {
    const { flux, service } = setup(['a', 'b']);
    const conn = flux.conn();
    // status writes race every patch once
    const orig = conn.json.bind(conn);
    let raced = 0;
    (conn as unknown as { json: typeof orig }).json = async (m, p, o) => {
      if (m === 'PATCH' && raced++ < 1) flux.statusWrite('a');
      return orig(m, p, o);
    };
    const s2 = new FreezeService({
      ...(service as unknown as { deps: ConstructorParameters<typeof FreezeService>[0] }).deps,
      conn: () => conn,
    });
    const f = await s2.create(oncall, { cluster: 'c', app: app('a').id, reason: 'incident', minutes: 10 });
    expect(f.doc.targets[0]?.applied).toBe(true);
    expect(flux.suspended('a')).toBe(true);
    // someone suspends b by hand between the console's read and its patch: the freeze does not take it over
    let once = false;
    (conn as unknown as { json: typeof orig }).json = async (m, p, o) => {
      if (m === 'PATCH' && !once) {
        once = true;
        const b = flux.objects.get('b') as Obj;
        (b.spec as Obj).suspend = true;
        flux.statusWrite('b');
      }
      return orig(m, p, o);
    };
    const err = await s2
      .create(oncall, { cluster: 'c', app: app('b').id, reason: 'incident', minutes: 10 })
      .catch((e: unknown) => e);
    expect((err as HttpError).status).toBe(409);
    await s2.settled();
    await service.settled();
  });

  it('ending restores each app exactly; a failed restore keeps the freeze and can be retried', async () => {
    const { flux, service, freezes } = setup(['a', 'b']);
    flux.add('b', { suspend: false });
    const f = await service.create(oncall, { cluster: 'c', env: 'dev', reason: 'incident', minutes: 10 });
    flux.refuse.set('b', 500);
    const err = await service.end(f.id, oncall, []).catch((e: unknown) => e);
    expect((err as HttpError).status).toBe(502);
    expect((await freezes.get(f.id))?.status).toBe('active');
    flux.refuse.clear();
    const ended = await service.end(f.id, oncall, []);
    expect(ended.status).toBe('ended');
    expect((flux.objects.get('a') as { spec: Obj }).spec).toEqual({ interval: '5m' });
    expect((flux.objects.get('b') as { spec: Obj }).spec).toEqual({ interval: '5m', suspend: false });
    expect(flux.annotations('a')).toEqual({});
    expect(await freezes.claimOf(app('a').id)).toBeUndefined();
    await service.settled();
  });

  it('decisions naming an unknown change are refused before anything is done', async () => {
    const { flux, service, freezes } = setup(['a']);
    const f = await service.create(oncall, { cluster: 'c', app: app('a').id, reason: 'incident', minutes: 10 });
    const err = await service
      .end(f.id, oncall, [{ change: 'nope#spec.replicas', action: 'write-back' }])
      .catch((e: unknown) => e);
    expect((err as HttpError).status).toBe(400);
    expect(flux.suspended('a')).toBe(true);
    expect((await freezes.get(f.id))?.status).toBe('active');
    await service.settled();
  });
});
