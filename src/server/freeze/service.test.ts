// The freeze service's failure paths against an in-memory apiserver for Kustomizations and a real SQLite
// evidence store: a freeze whose intent cannot be recorded patches nothing; a freeze of an environment that
// the cluster refuses half-way (403 / 409) undoes what it did and releases its claims; the end restores each
// app exactly even after the apps changed status meanwhile; an expiry retries after a failed restore. The
// happy paths run against the real sandbox in test/integration/freeze.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import { FREEZE_ANNOTATIONS } from '../../domain/freeze.ts';
import { EvidenceRecorder } from '../evidence/recorder.ts';
import { HttpError } from '../http/errors.ts';
import { KubeError, type ClusterConnection } from '../kube/connection.ts';
import { FreezeService, type FreezeActor } from './service.ts';
import { FreezeStore } from './store.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'freeze-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Obj = Record<string, unknown>;

/** Kustomizations in flux-system: GET, and merge PATCH honouring a resourceVersion precondition. */
class FakeFlux {
  objects = new Map<string, Obj>();
  patches: string[] = [];
  refuse = new Map<string, number>();
  private rv = 1;
  add(name: string, spec: Obj = {}): void {
    this.objects.set(name, {
      metadata: { name, namespace: 'flux-system', resourceVersion: String(++this.rv), annotations: {} },
      spec: { interval: '5m', ...spec },
    });
  }
  /** a controller's status write: a new resourceVersion, nothing else */
  statusWrite(name: string): void {
    ((this.objects.get(name) as Obj).metadata as Obj).resourceVersion = String(++this.rv);
  }
  conn(): ClusterConnection {
    const merge = (a: Obj, b: Obj): Obj => {
      const out: Obj = { ...a };
      for (const [k, v] of Object.entries(b)) {
        if (v === null) delete out[k];
        else if (v && typeof v === 'object' && !Array.isArray(v))
          out[k] = merge((a[k] as Obj | undefined) ?? {}, v as Obj);
        else out[k] = v;
      }
      return out;
    };
    return {
      json: async (method: string, path: string, opts: { body?: string } = {}) => {
        const name = decodeURIComponent(/kustomizations\/([^/?]+)/.exec(path)?.[1] ?? '');
        const o = this.objects.get(name);
        if (!o) throw new KubeError('not found', 'c', 404);
        if (method === 'GET') return structuredClone(o);
        const status = this.refuse.get(name);
        if (status) throw new KubeError(`refused ${status}`, 'c', status);
        const body = JSON.parse(opts.body ?? '{}') as Obj;
        const want = (body.metadata as Obj | undefined)?.resourceVersion;
        if (want !== undefined && want !== (o.metadata as Obj).resourceVersion)
          throw new KubeError('conflict', 'c', 409);
        if (want !== undefined) delete (body.metadata as Obj).resourceVersion;
        const next = merge(o, body);
        (next.metadata as Obj).resourceVersion = String(++this.rv);
        this.objects.set(name, next);
        this.patches.push(name);
        return structuredClone(next);
      },
    } as unknown as ClusterConnection;
  }
}

const app = (name: string): App => ({
  id: `c/flux-system/kustomization/${name}`,
  cluster: 'c',
  controller: 'flux',
  kind: 'Kustomization',
  namespace: 'flux-system',
  name,
  env: 'dev',
  source: {},
  automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
  sync: 'Synced',
  health: 'Healthy',
  healthMessage: '',
  conditions: [],
  inventory: [],
  warnings: [],
});

const oncall: FreezeActor = { name: 'oncall', may: () => true };

function setup(names: string[], store?: EvidenceStore) {
  const flux = new FakeFlux();
  for (const n of names) flux.add(n);
  const ev = store ?? SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);
  const recorder = new EvidenceRecorder(ev, { warn() {}, error() {} });
  const apps = new Map(names.map((n) => [app(n).id, app(n)]));
  const freezes = new FreezeStore(ev);
  const service = new FreezeService({
    recorder,
    store: freezes,
    apps: { get: (id) => apps.get(id), list: () => [...apps.values()], raw: () => undefined },
    conn: () => flux.conn(),
    diff: async () => ({ state: 'ok', objects: [] }),
  });
  return { flux, ev, recorder, service, freezes };
}

const suspended = (flux: FakeFlux, n: string) => ((flux.objects.get(n) as Obj).spec as Obj).suspend;
const annotations = (flux: FakeFlux, n: string) => ((flux.objects.get(n) as Obj).metadata as Obj).annotations as Obj;

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
      expect(suspended(flux, n), n).not.toBe(true);
      expect(annotations(flux, n)[FREEZE_ANNOTATIONS.id], n).toBeUndefined();
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
    expect(names.every((n) => suspended(flux, n) === true)).toBe(true);
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
    expect(suspended(flux, 'a')).toBe(true);
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
    expect(annotations(flux, 'a')).toEqual({});
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
    expect(suspended(flux, 'a')).toBe(true);
    expect((await freezes.get(f.id))?.status).toBe('active');
    await service.settled();
  });
});
