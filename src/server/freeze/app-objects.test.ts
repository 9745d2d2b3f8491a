// The freeze patch against controllers that keep writing (in-memory apiserver honouring resourceVersion
// preconditions, test/support/freeze-fakes.ts): status writes between the read and the patch are outlasted with a
// growing pause; a change of what the freeze stores (the prior) or an object that can no longer be frozen is a
// conflict that says which; an object written on every attempt gives up after PATCH_ATTEMPTS with that message.
// An ApplicationSet pause the cluster never answered is settled: fenced and made again, or unknown at the deadline.
import { describe, expect, it } from 'vitest';
import { appSetFreezeOps, freezePatch, priorOf } from '../../domain/freeze.ts';
import { KubeError, type ClusterConnection } from '../kube/connection.ts';
import { FakeFlux } from '../../../test/support/freeze-fakes.ts';
import { HttpError } from '../http/errors.ts';
import { PATCH_ATTEMPTS, patchAppSet, patchUnchanged } from './app-objects.ts';
import type { FreezeTarget } from './store.ts';

type Obj = Record<string, unknown>;
const meta = { id: 'frz-1', by: 'oncall', reason: 'incident', until: '2026-12-05T16:00:00.000Z' };

/** the fake apiserver's connection, with `before(n)` run ahead of the n-th PATCH (a controller writing meanwhile) */
function writing(flux: FakeFlux, before: (n: number) => void): ClusterConnection {
  const conn = flux.conn();
  let patches = 0;
  return {
    json: (method: string, path: string, opts?: unknown) => {
      if (method === 'PATCH') before(++patches);
      return (conn.json as (m: string, p: string, o?: unknown) => Promise<unknown>)(method, path, opts);
    },
  } as unknown as ClusterConnection;
}

function target(flux: FakeFlux, name: string): { t: FreezeTarget; obj: Obj } {
  const obj = structuredClone(flux.objects.get(name) as Obj);
  const t: FreezeTarget = {
    appId: `c/flux-system/kustomization/${name}`,
    kind: 'Kustomization',
    namespace: 'flux-system',
    name,
    controller: 'flux',
    env: 'prod',
    prior: priorOf('flux', obj),
    applied: false,
  };
  return { t, obj };
}

const attempt = async (conn: ClusterConnection, t: FreezeTarget, obj: Obj, pauses: number[]) =>
  patchUnchanged(
    conn,
    t,
    obj,
    (rv) => freezePatch(t.prior, meta, rv),
    async (ms) => void pauses.push(ms),
  );

describe('patchUnchanged: the freeze patch beside controllers that keep writing', () => {
  it('outlasts status writes between its read and its patch, pausing 25, 50, 100 ms between tries', async () => {
    const flux = new FakeFlux();
    flux.add('a');
    const { t, obj } = target(flux, 'a');
    const pauses: number[] = [];
    const conn = writing(flux, (n) => n <= 3 && flux.statusWrite('a'));
    const after = await attempt(conn, t, obj, pauses);
    expect((after.spec as Obj).suspend).toBe(true);
    expect(flux.suspended('a')).toBe(true);
    expect(pauses).toEqual([25, 50, 100]);
  });

  it(`gives up after ${PATCH_ATTEMPTS} conflicting writes in a row, saying so (nothing paused)`, async () => {
    const flux = new FakeFlux();
    flux.add('a');
    const { t, obj } = target(flux, 'a');
    const pauses: number[] = [];
    const err = await attempt(
      writing(flux, () => flux.statusWrite('a')),
      t,
      obj,
      pauses,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(409);
    expect((err as HttpError).message).toBe(
      `cannot freeze a: its object was written ${PATCH_ATTEMPTS} times while the freeze tried to pause it; try again`,
    );
    expect(pauses).toEqual([25, 50, 100, 200, 400, 400, 400]);
    expect(flux.suspended('a')).toBe(false);
  });

  it('a change of what the freeze stored (its prior) is a conflict naming it, not retried', async () => {
    const flux = new FakeFlux();
    flux.add('a');
    const { t, obj } = target(flux, 'a');
    const pauses: number[] = [];
    const conn = writing(flux, (n) => {
      if (n === 1) ((flux.objects.get('a') as Obj).spec as Obj).suspend = false;
      flux.statusWrite('a');
    });
    const err = (await attempt(conn, t, obj, pauses).catch((e: unknown) => e)) as HttpError;
    expect(err.status).toBe(409);
    expect(err.message).toBe('cannot freeze a: its suspend flag changed while the freeze was being started; try again');
    expect(pauses).toEqual([]);
    expect(flux.suspended('a')).toBe(false);
  });

  it('an object suspended by someone else meanwhile is a conflict with the reason it cannot be frozen', async () => {
    const flux = new FakeFlux();
    flux.add('a');
    const { t, obj } = target(flux, 'a');
    const conn = writing(flux, (n) => {
      if (n === 1) ((flux.objects.get('a') as Obj).spec as Obj).suspend = true;
      flux.statusWrite('a');
    });
    const err = (await attempt(conn, t, obj, []).catch((e: unknown) => e)) as HttpError;
    expect(err.status).toBe(409);
    expect(err.message).toMatch(/^cannot freeze a: already suspended outside the console/);
  });
});

describe('patchAppSet with settle: a pause of the ApplicationSet the cluster never answered', () => {
  const OPS = (live: Obj) => appSetFreezeOps(live, 'web');
  /** one ApplicationSet; its first PATCH is held (applied by `late()`), reads fail `unreadable` times after it */
  function appSetServer(unreadable: number) {
    let obj: Obj = { metadata: { name: 'shop', namespace: 'argocd', resourceVersion: '1' }, spec: {} };
    let rv = 1;
    let held: Obj[] | undefined;
    let failing = 0;
    const apply = (ops: Array<{ op: string; path: string; value: unknown }>) => {
      const next = structuredClone(obj);
      for (const o of ops) {
        const keys = o.path.split('/').slice(1);
        const parent = keys.slice(0, -1).reduce((x: Obj, k) => x[k] as Obj, next);
        const last = keys.at(-1) as string;
        if (o.op === 'test' && JSON.stringify(parent[last]) !== JSON.stringify(o.value))
          throw new KubeError('test failed', 'c', 422);
        if (o.op === 'add') parent[last] = o.value;
      }
      (next.metadata as Obj).resourceVersion = String(++rv);
      obj = next;
      return structuredClone(obj);
    };
    const conn = {
      json: async (method: string, _path: string, opts: { body?: string; contentType?: string } = {}) => {
        if (method === 'GET') {
          if (failing > 0) {
            failing--;
            throw new KubeError('unreachable: ETIMEDOUT', 'c', 0, 'ETIMEDOUT');
          }
          return structuredClone(obj);
        }
        const body = JSON.parse(opts.body ?? '{}') as unknown;
        if (opts.contentType === 'application/merge-patch+json') {
          // the fence: at the version it names, an annotation added then taken away
          const m = (body as { metadata: Obj }).metadata;
          if (m.resourceVersion !== undefined && m.resourceVersion !== (obj.metadata as Obj).resourceVersion)
            throw new KubeError('conflict', 'c', 409);
          (obj.metadata as Obj).resourceVersion = String(++rv);
          return structuredClone(obj);
        }
        if (!held) {
          held = body as Obj[];
          failing = unreadable;
          throw new KubeError('request timed out after 10000 ms', 'c', 0, 'ETIMEDOUT');
        }
        return apply(body as Array<{ op: string; path: string; value: unknown }>);
      },
    } as unknown as ClusterConnection;
    return {
      conn,
      live: () => obj,
      late: () => {
        try {
          apply(held as Array<{ op: string; path: string; value: unknown }>);
        } catch {
          /* refused: nobody hears */
        }
      },
    };
  }

  it('turned away by a fence, made again: one entry, and the late copy fails its version test', async () => {
    const s = appSetServer(0);
    const r = await patchAppSet(s.conn, 'argocd', 'shop', OPS, 'pause', { fence: 'frz-1', opts: { deadlineMs: 1000 } });
    expect(r).toBe('patched');
    expect(OPS(s.live())).toBeNull();
    const before = JSON.stringify(s.live());
    s.late();
    expect(JSON.stringify(s.live())).toBe(before);
  });

  it('unreadable until the deadline: unknown (the caller undoes it, or keeps the freeze to end it)', async () => {
    let t = 0;
    const s = appSetServer(1000);
    const r = await patchAppSet(s.conn, 'argocd', 'shop', OPS, 'pause', {
      fence: 'frz-1',
      opts: { deadlineMs: 3000, now: () => t, pause: async (ms) => (t += ms) },
    });
    expect(r).toBe('unknown');
  });
});
