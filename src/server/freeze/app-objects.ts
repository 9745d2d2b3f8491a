// The frozen app objects on the cluster: read, patched (with the resourceVersion retry of a freeze patch),
// and fanned out a few at a time when a whole environment is frozen or restored.
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalJson } from '../../domain/evidence.ts';
import { cannotFreeze, priorOf, type Patch, type RolloutPrior } from '../../domain/freeze.ts';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import { clusterHttpError, HttpError } from '../http/errors.ts';
import type { ClusterConnection } from '../kube/connection.ts';
import { KINDS } from '../kube/kinds.ts';
import { settleUnansweredWrite, unanswered, type SettleOpts } from '../kube/unanswered-write.ts';
import type { FreezeTarget } from './store.ts';

/** app objects read and patched at once when a whole environment is frozen */
export const CONCURRENCY = 8;

/**
 * `fn` over `items`, at most `limit` at a time, results in order. The first failure is thrown once every
 * call in flight has settled (so callers can undo exactly what was done).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failed.error;
  return out;
}

function objectPath(t: Pick<FreezeTarget, 'kind' | 'namespace' | 'name'>): string {
  const k = KINDS[t.kind];
  return `/apis/${k.group}/${k.version}/namespaces/${encodeURIComponent(t.namespace)}/${k.plural}/${encodeURIComponent(t.name)}`;
}

/** The app object as the apiserver has it now. */
export async function readObject(
  conn: ClusterConnection,
  t: Pick<FreezeTarget, 'kind' | 'namespace' | 'name'>,
): Promise<Obj> {
  try {
    return await conn.json<Obj>('GET', objectPath(t), { timeoutMs: 10_000 });
  } catch (e) {
    throw clusterHttpError(e, `cannot read ${t.kind} ${t.name}`, '');
  }
}

export async function patchObject(conn: ClusterConnection, t: FreezeTarget, p: Patch, what: string): Promise<Obj> {
  try {
    return await conn.json<Obj>('PATCH', `${objectPath(t)}?fieldManager=gitops-console`, {
      body: JSON.stringify(p.body),
      contentType: p.contentType,
      timeoutMs: 10_000,
    });
  } catch (e) {
    throw clusterHttpError(e, what, '');
  }
}

/** conflicting writes a freeze patch outlasts before it gives up (a controller mid-sync writes status often) */
export const PATCH_ATTEMPTS = 8;

/**
 * The freeze's patch with the object's resourceVersion as precondition. Controllers write status all the
 * time (a new resourceVersion each): on a 409 the object is read again and, when what the freeze stored of
 * it (its prior automation) is unchanged, the patch is retried with the new version after a short, growing
 * pause (25 ms doubling, at most 400 ms; PATCH_ATTEMPTS in all). When someone changed the automation
 * meanwhile, the conflict stands, and its message says which of the two it was.
 */
export async function patchUnchanged(
  conn: ClusterConnection,
  t: FreezeTarget,
  obj: Obj,
  patch: (rv: string) => Patch,
  pause: (ms: number) => Promise<unknown> = sleep,
): Promise<Obj> {
  let current = obj;
  for (let attempt = 1; ; attempt++) {
    const rv = String(metaOf(current).resourceVersion ?? '');
    try {
      return await patchObject(conn, t, patch(rv), `cannot freeze ${t.name}`);
    } catch (e) {
      if (!(e instanceof HttpError && e.status === 409)) throw e;
      const conflict = (why: string) =>
        new HttpError(409, 'Conflict', `cannot freeze ${t.name}: ${why}`, e.cluster, e.detail);
      if (attempt >= PATCH_ATTEMPTS)
        throw conflict(`its object was written ${attempt} times while the freeze tried to pause it; try again`);
      current = await readObject(conn, t);
      const why = cannotFreeze(t.controller, current);
      if (why) throw conflict(why);
      if (canonicalJson(priorOf(t.controller, current)) !== canonicalJson(t.prior))
        throw conflict(
          `its ${t.controller === 'flux' ? 'suspend flag' : 'sync policy'} changed while the freeze was being started; try again`,
        );
      await pause(Math.min(400, 25 * 2 ** (attempt - 1)));
    }
  }
}

const appSetPath = (namespace: string, name: string) =>
  `/apis/argoproj.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/applicationsets/${encodeURIComponent(name)}`;

/** The ApplicationSet that generated a frozen Application, as the apiserver has it now. */
export async function readAppSet(conn: ClusterConnection, namespace: string, name: string): Promise<Obj> {
  try {
    return await conn.json<Obj>('GET', appSetPath(namespace, name), { timeoutMs: 10_000 });
  } catch (e) {
    throw clusterHttpError(e, `cannot read ApplicationSet ${name}`, '');
  }
}

/**
 * How a freeze start settles a write of the ApplicationSet or a Rollout the cluster never answered
 * (kube/unanswered-write.ts): the write names the version it was made from, and `fence` turns a late copy away.
 */
export interface WriteSettle {
  fence: string;
  opts?: SettleOpts | undefined;
}

const rvOf = (o: Obj) => String(metaOf(o).resourceVersion ?? '');

/**
 * The freeze's change of the ApplicationSet (domain/freeze.ts appSetFreezeOps / appSetRestoreOps), computed on it
 * as it is live and sent as a JSON Patch whose `test` ops fail on a concurrent change (422/409): read again and
 * retried. A restore of an ApplicationSet that is gone has nothing to take back. With `settle` the patch also tests
 * the version it was computed on, and one the cluster never answered is settled against the object: applied (no
 * op left to make), not applied (made again from the object as it is), or `unknown` at the deadline.
 */
export async function patchAppSet(
  conn: ClusterConnection,
  namespace: string,
  name: string,
  ops: (live: Obj) => unknown[] | null,
  what: string,
  settle?: WriteSettle,
): Promise<'patched' | 'unchanged' | 'gone' | 'unknown'> {
  for (let attempt = 1; ; attempt++) {
    let live: Obj;
    try {
      live = await readAppSet(conn, namespace, name);
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) return 'gone';
      throw e;
    }
    const body = ops(live);
    if (!body) return 'unchanged';
    const rv = rvOf(live);
    try {
      await conn.json<Obj>('PATCH', `${appSetPath(namespace, name)}?fieldManager=gitops-console`, {
        body: JSON.stringify(settle ? [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, ...body] : body),
        contentType: 'application/json-patch+json',
        timeoutMs: 10_000,
      });
      return 'patched';
    } catch (e) {
      if (settle && unanswered(e)) {
        const path = appSetPath(namespace, name);
        const r = await settleUnansweredWrite(conn, path, rv, (l) => ops(l) === null, settle.fence, settle.opts);
        if (r.outcome === 'applied') return 'patched';
        if (r.outcome === 'unknown') return 'unknown';
        if (attempt >= 5) throw clusterHttpError(e, what, '');
        continue; // turned away: made again from the object as it is now
      }
      const err = clusterHttpError(e, what, '');
      if (!(err instanceof HttpError && [409, 422].includes(err.status)) || attempt >= 5) throw err;
    }
  }
}

const rolloutPath = (namespace: string, name: string, kind?: 'Canary') =>
  kind === 'Canary'
    ? `/apis/flagger.app/v1beta1/namespaces/${encodeURIComponent(namespace)}/canaries/${encodeURIComponent(name)}`
    : `/apis/argoproj.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/rollouts/${encodeURIComponent(name)}`;

/**
 * The app's Argo Rollouts Rollouts (from its inventory) with their `spec.paused` now, and its Flagger Canaries with
 * their `spec.suspend`; a gone one is skipped.
 */
export async function readRolloutPriors(
  conn: ClusterConnection,
  inventory: Array<{ group: string; kind: string; namespace?: string; name: string }>,
): Promise<RolloutPrior[]> {
  const out: RolloutPrior[] = [];
  for (const r of inventory) {
    const canary = r.group === 'flagger.app' && r.kind === 'Canary';
    if ((!canary && (r.group !== 'argoproj.io' || r.kind !== 'Rollout')) || !r.namespace) continue;
    const kind = canary ? ('Canary' as const) : undefined;
    const res = await conn.request('GET', rolloutPath(r.namespace, r.name, kind), { timeoutMs: 10_000 });
    if (res.status === 404) continue;
    if (res.status !== 200)
      throw clusterHttpError(conn.httpError(res, `GET ${r.kind} ${r.name}`), `cannot read ${r.kind} ${r.name}`, '');
    const spec = ((JSON.parse(res.body) as Obj).spec ?? {}) as Obj;
    const v = canary ? spec.suspend : spec.paused;
    out.push({
      ...(kind ? { kind } : {}),
      namespace: r.namespace,
      name: r.name,
      paused: typeof v === 'boolean' ? v : null,
    });
  }
  return out;
}

/**
 * Sets (or, with null, removes) a Rollout's `spec.paused` — a Flagger Canary's `spec.suspend`; one that is gone has
 * nothing to set.
 */
export async function setRolloutPaused(
  conn: ClusterConnection,
  r: { kind?: 'Canary'; namespace: string; name: string },
  paused: boolean | null,
  what: string,
  settle?: WriteSettle,
): Promise<'patched' | 'gone' | 'unknown'> {
  const path = rolloutPath(r.namespace, r.name, r.kind);
  const spec = r.kind === 'Canary' ? { suspend: paused } : { paused };
  const pausedOf = (live: Obj) => {
    const v = (live.spec as Obj | undefined)?.[r.kind === 'Canary' ? 'suspend' : 'paused'];
    return typeof v === 'boolean' ? v : null;
  };
  for (let attempt = 1; ; attempt++) {
    // with `settle`: made from the version read now, so that a write without an answer can be settled
    let rv = '';
    if (settle) {
      const res = await conn.request('GET', path, { timeoutMs: 10_000 }).catch((e: unknown) => {
        throw clusterHttpError(e, what, '');
      });
      if (res.status === 404) return 'gone';
      if (res.status !== 200) throw clusterHttpError(conn.httpError(res, what), what, '');
      const live = JSON.parse(res.body) as Obj;
      if (pausedOf(live) === paused) return 'patched';
      rv = rvOf(live);
    }
    const body = JSON.stringify(rv ? { metadata: { resourceVersion: rv }, spec } : { spec });
    let res;
    try {
      res = await conn.request('PATCH', `${path}?fieldManager=gitops-console`, {
        timeoutMs: 10_000,
        contentType: 'application/merge-patch+json',
        headers: { 'Content-Length': String(Buffer.byteLength(body)) },
        body,
      });
    } catch (e) {
      if (!settle || !unanswered(e)) throw clusterHttpError(e, what, '');
      const s = await settleUnansweredWrite(conn, path, rv, (l) => pausedOf(l) === paused, settle.fence, settle.opts);
      if (s.outcome === 'applied') return 'patched';
      if (s.outcome === 'unknown') return 'unknown';
      if (attempt >= 5) throw clusterHttpError(e, what, '');
      continue; // turned away: made again from the object as it is now
    }
    if (res.status === 404) return 'gone';
    if (res.status === 409 && settle && attempt < 5) continue;
    if (res.status !== 200) throw clusterHttpError(conn.httpError(res, what), what, '');
    return 'patched';
  }
}
