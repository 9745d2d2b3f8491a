// Per-object diff results remembered by what they depend on, so a diff refetched after a live change redoes
// the dry-run (and the field diff) of the objects that changed only. The key of one object's result:
//   - the scope: cluster, app, controller, the field manager the dry-run applies as, the identity it goes out
//     as (the user in impersonation mode, else the console), the dry-run request, the app's ignore rules
//     (Argo CD ignoreDifferences) and whether jq-del is configured;
//   - the desired object (a hash of the rendered object, unmasked, kept in memory only);
//   - the live object without what a status write changes: `status`, `resourceVersion`, the managedFields
//     entries' `f:status` (an entry that owned only status is dropped) and their `time`s. The field diff never
//     compares status (SKIP_ROOT in field-diff.ts) and the YAML shown strips it, so a Deployment whose status
//     moved because its Pods did keeps its result; anything else that moved (spec, labels, annotations, which
//     manager owns a non-status field, its generation) changes the key. A time is not in the key but is in a
//     result (a change's owners): a reused result whose owners' times moved (kube-controller-manager's entry
//     owns a Deployment's revision annotation and its status: every status write moves its time) gets its
//     owners from the current live object, as the field diff finds them (ownersOfPath), so a reused result
//     is always the result a fresh diff would give.
// Bounded: LRU over entries and over the approximate size of the results; a clean server-side result lives
// up to 10 minutes (a CRD schema or admission change is not in the key), one with a note (normalized
// comparison, a failed dry-run) 15 seconds.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../domain/evidence.ts';
import { ownersByPath, ownersOfPath } from '../../domain/managed-fields.ts';
import type { ObjectDiff, ObjectDiffMemo } from './app-diff.ts';
import { Lru } from './lru.ts';
import type { Obj } from './render.ts';

export interface MemoScope {
  cluster: string;
  appId: string;
  controller: string;
  manager: string;
  /** who the dry-run goes out as: `console`, or the impersonated user and groups */
  identity: string;
  /** the dry-run request's options (dryRun=All, force) */
  dryRun: string;
  /** the app's ignore rules (Argo CD spec.ignoreDifferences), as configured */
  ignore: unknown;
  jq: boolean;
}

export interface ObjectDiffCacheOptions {
  /** results kept (default 20,000) */
  maxEntries?: number;
  /** approximate characters of YAML and changes kept across all results (default 64 Mi) */
  maxChars?: number;
  /** how long a clean server-side dry-run result is reused (default 10 min) */
  ttlMs?: number;
  /** how long a result with a note (normalized comparison, dry-run failure) is reused (default 15 s) */
  degradedTtlMs?: number;
  now?: () => number;
}

export interface ObjectDiffCacheStats {
  /** results reused */
  hits: number;
  /** results computed (each one server-side dry-run) */
  misses: number;
  entries: number;
  chars: number;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const desiredHashes = new WeakMap<Obj, string>();
/** A hash of a desired object (renders are cached, so the same object is hashed once). */
export function desiredHash(o: Obj): string {
  let h = desiredHashes.get(o);
  if (h === undefined) desiredHashes.set(o, (h = sha(canonicalJson(o))));
  return h;
}

type ManagedFieldsEntry = { fieldsV1?: Record<string, unknown>; time?: string } & Obj;

/** managedFields entries apart from status ownership: those owning nothing else are dropped. */
function nonStatusEntries(o: Obj): ManagedFieldsEntry[] {
  const mf = ((o.metadata ?? {}) as Obj).managedFields;
  if (!Array.isArray(mf)) return [];
  return (mf as ManagedFieldsEntry[]).flatMap((e) => {
    if (!e.fieldsV1 || !('f:status' in e.fieldsV1)) return [e];
    const { 'f:status': _s, ...fields } = e.fieldsV1;
    return Object.keys(fields).length ? [{ ...e, fieldsV1: fields }] : [];
  });
}

/** The live object as far as a diff's key sees it: no status, resourceVersion, status ownership or entry times. */
export function liveWithoutStatus(o: Obj): Obj {
  const { status: _status, ...rest } = o;
  const md = { ...((o.metadata ?? {}) as Obj) };
  delete md.resourceVersion;
  if (Array.isArray(md.managedFields)) md.managedFields = nonStatusEntries(o).map(({ time: _t, ...e }) => e);
  return { ...rest, metadata: md };
}

const ownerTimesOf = new WeakMap<Obj, string>();
/** The times of the entries that own non-status fields: what a reused result's owners may need refreshed. */
function ownerTimes(o: Obj | undefined): string {
  if (!o) return '';
  let t = ownerTimesOf.get(o);
  if (t === undefined)
    ownerTimesOf.set(
      o,
      (t = nonStatusEntries(o)
        .map((e) => e.time ?? '')
        .join(',')),
    );
  return t;
}

const liveFingerprints = new WeakMap<Obj, string>();
/** A hash of liveWithoutStatus(o) (the informer replaces an object on every change, so one hash per version). */
export function liveFingerprint(o: Obj): string {
  let h = liveFingerprints.get(o);
  if (h === undefined) liveFingerprints.set(o, (h = sha(canonicalJson(liveWithoutStatus(o)))));
  return h;
}

const weigh = (d: ObjectDiff) =>
  200 +
  (d.desiredYaml?.length ?? 0) +
  (d.liveYaml?.length ?? 0) +
  (d.predictedYaml?.length ?? 0) +
  (d.note?.length ?? 0) +
  JSON.stringify(d.changes).length;

interface Remembered {
  result: ObjectDiff;
  times: string;
}

export class ObjectDiffCache {
  private readonly lru: Lru<string, Remembered>;
  private readonly ttlMs: number;
  private readonly degradedTtlMs: number;
  private counts = { hits: 0, misses: 0 };

  constructor(opts: ObjectDiffCacheOptions = {}) {
    this.lru = new Lru<string, Remembered>({
      maxEntries: opts.maxEntries ?? 20_000,
      maxWeight: opts.maxChars ?? 64 * 1024 * 1024,
      weigh: (r) => weigh(r.result),
      ...(opts.now ? { now: opts.now } : {}),
    });
    this.ttlMs = opts.ttlMs ?? 10 * 60_000;
    this.degradedTtlMs = opts.degradedTtlMs ?? 15_000;
  }

  /** The memo one diff uses; `onRecall`/`onCompute` count that diff's reuse and dry-runs. */
  scope(s: MemoScope, counters?: { reused: number; computed: number }): ObjectDiffMemo {
    const prefix = sha(canonicalJson(s));
    const key = (desired: Obj, live: Obj | undefined) =>
      `${prefix}:${desiredHash(desired)}:${live ? liveFingerprint(live) : 'absent'}`;
    return {
      recall: (desired, live) => {
        const hit = this.lru.get(key(desired, live));
        if (!hit) return undefined;
        this.counts.hits++;
        if (counters) counters.reused++;
        if (!live || hit.times === ownerTimes(live) || !hit.result.changes.length) return hit.result;
        // same fields, same owners, later times: the owners as the field diff would find them now
        const owners = ownersByPath(live);
        return {
          ...hit.result,
          changes: hit.result.changes.map((c) => ({ ...c, owners: ownersOfPath(owners, c.path) })),
        };
      },
      remember: (desired, live, result) => {
        this.counts.misses++;
        if (counters) counters.computed++;
        const clean = result.mode === 'server-dry-run' && !result.note;
        this.lru.set(key(desired, live), { result, times: ownerTimes(live) }, clean ? this.ttlMs : this.degradedTtlMs);
      },
    };
  }

  stats(): ObjectDiffCacheStats {
    return { ...this.counts, entries: this.lru.size, chars: this.lru.weight };
  }
}
