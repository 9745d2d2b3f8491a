/**
 * Drift as the informers see it, without a dry-run: from two versions of one
 * managed object (before and after a write), which fields the GitOps
 * controller owned were taken or changed by another field manager, with the
 * old and new values. Pure; the paths are managed-fields.ts's one format.
 *
 * "Git declares a field" is read from the controller's own ownership: the
 * controller's server-side apply owns exactly the fields of the render, so a
 * field the controller owned before the write (or still shares after it) is
 * Git's. A write by an interactive tool (`kubectl-edit`, `kubectl-scale`…) to
 * such a field is drift by a person; by any other manager (an HPA through
 * `/scale`, a cloud controller) it is a conflict — unless it is a
 * progressive-delivery controller doing what its source does (Flagger scaling
 * its target to 0, Argo Rollouts pinning a Service to a ReplicaSet:
 * delivery-writes.ts's rules), which is no drift at all. A field Git does not declare
 * is another controller's business (an HPA scaling a Deployment whose replicas
 * Git leaves out is no drift), unless a person's tool wrote it: the diff calls
 * a field added by hand drift too. Status writes, the controller's own writes
 * and writes that change no value are no drift (the full diff shows nothing).
 * Paths are the diff's leaves (flattenObject's), so both name the same fields.
 */
import { groupKindOf, isDeliveryWrite } from './delivery-writes.ts';
import { isGitOpsControllerManager, isInteractiveManager } from './field-managers.ts';
import { flattenObject, isKeyLeaf } from './field-diff.ts';
import { ownersByPath, ownersOfPath, type FieldOwner } from './managed-fields.ts';
import type { ObjectRef } from './refs.ts';

type Obj = Record<string, unknown>;

export interface DriftField {
  path: string;
  /** the value before the write (what Git had applied) */
  from?: unknown;
  /** the value the write left */
  to?: unknown;
}

export interface DriftWrite {
  /** person: an interactive tool; conflict: another controller */
  kind: 'person' | 'conflict';
  manager: string;
  operation: FieldOwner['operation'];
  subresource?: string;
  /** the managedFields time of the write */
  time?: string;
  fields: DriftField[];
}

interface Entry {
  manager: string;
  operation: string;
  subresource?: string;
  time?: string;
  fieldsV1?: unknown;
}

const entries = (o: Obj | undefined): Entry[] => {
  const mf = (o?.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  return Array.isArray(mf) ? (mf.filter((e) => e && typeof e === 'object') as Entry[]) : [];
};
const entryKey = (e: { manager: string; operation: string; subresource?: string | undefined }) =>
  `${e.manager}\u0000${e.operation}\u0000${e.subresource ?? ''}`;
const same = (a: unknown, b: unknown) =>
  a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

/** Deep equality of two JSON trees (managedFields tries), stopping at the first difference. */
function sameTree(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!sameTree((a as Obj)[k], (b as Obj)[k])) return false;
  return true;
}

const NO_PATHS: ReadonlySet<string> = new Set();

/** A GitOps controller's manager: the app's own, or any controller's (their applies are never drift) */
function isControllerOf(manager: string, controllerManagers: readonly string[]): boolean {
  return controllerManagers.includes(manager) || isGitOpsControllerManager(manager);
}

const rawEntries = (o: Obj): unknown[] => {
  const mf = (o.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  return Array.isArray(mf) ? mf : [];
};
const sameEntry = (a: Entry, b: Entry) =>
  a.manager === b.manager && a.operation === b.operation && (a.subresource ?? '') === (b.subresource ?? '');
const findEntry = (list: unknown[], e: Entry): Entry | undefined => {
  for (const x of list) if (x && typeof x === 'object' && sameEntry(x as Entry, e)) return x as Entry;
  return undefined;
};

/**
 * Whether `next` can hold drift that `prev` did not, from managedFields alone: a non-controller,
 * non-status entry is new or refreshed (time or fields), and — unless its manager is a person's tool —
 * a GitOps controller's entry lost fields (another controller can only take a field Git declares from the
 * controller: a changed value belongs to its writer alone). Most updates (status writes, the controller's
 * own applies, an agent's annotation) end here, before both versions are flattened.
 */
function mayDrift(prev: Obj, next: Obj, controllerManagers: readonly string[]): boolean {
  const before = rawEntries(prev);
  const after = rawEntries(next);
  let refreshed = false;
  let interactive = false;
  for (const x of after) {
    const e = x as Entry;
    if (!e || typeof e !== 'object' || !e.manager || isControllerOf(e.manager, controllerManagers)) continue;
    if (e.subresource === 'status') continue;
    const old = findEntry(before, e);
    if (old && old.time === e.time && sameTree(old.fieldsV1, e.fieldsV1)) continue;
    refreshed = true;
    if (isInteractiveManager(e.manager)) interactive = true;
  }
  if (!refreshed) return false;
  if (interactive) return true;
  for (const x of before) {
    const e = x as Entry;
    if (!e || typeof e !== 'object' || !e.manager || !isControllerOf(e.manager, controllerManagers)) continue;
    if (e.subresource === 'status') continue;
    const now = findEntry(after, e);
    if (!now || !sameTree(e.fieldsV1, now.fieldsV1)) return true;
  }
  return false;
}

/** The value at a path: the leaf, or the subtree's leaves when the path names a map or list item. */
function valueAt(flat: Map<string, unknown>, path: string): unknown {
  if (flat.has(path)) return flat.get(path);
  const sub: Record<string, unknown> = {};
  for (const [p, v] of flat) if (p.startsWith(`${path}.`) || p.startsWith(`${path}[`)) sub[p.slice(path.length)] = v;
  return Object.keys(sub).length ? sub : undefined;
}

/** The leaf paths (the diff's: flattenObject's, without keyed items' own keys) whose value differs. */
function changedLeaves(before: Map<string, unknown>, after: Map<string, unknown>): string[] {
  const out: string[] = [];
  for (const [p, v] of after) if (!same(v, before.get(p)) && !isKeyLeaf(p)) out.push(p);
  for (const p of before.keys()) if (!after.has(p) && !isKeyLeaf(p)) out.push(p);
  return out;
}

/**
 * The drifting writes between `prev` and `next` of one object, as the full diff would class them: each
 * changed leaf whose owner now is neither a GitOps controller nor a status writer, grouped by that owner's
 * managedFields entry. A field Git declares (the controller owned it before, shares it now, or an open
 * episode knows it) is drift by an interactive tool (`person`) or a `conflict` with any other manager, but
 * for a progressive-delivery controller's own write (no write at all, as the diff's `delivery` class); a
 * field Git does not declare is drift only when a person's tool wrote it (the diff's "added by hand"),
 * another controller's business otherwise.
 *
 * A write changes the value it takes, so the owner of a changed value is its writer (an Update or a forced
 * Apply takes the field). The checks run only when a non-controller entry is new or refreshed (time or
 * fields) — or, with an open episode (`known`), always: managedFields times have second resolution, so a
 * second write within the same second leaves them as they were.
 */
export function driftWrites(
  prev: Obj | undefined,
  next: Obj,
  controllerManagers: readonly string[],
  /** paths known to be Git's although the controller no longer owns them (an open drift episode's fields) */
  known: Iterable<string> = [],
): DriftWrite[] {
  if (!prev) return [];
  const knownPaths: ReadonlySet<string> = Array.isArray(known) && !known.length ? NO_PATHS : new Set(known);
  // Every update of every managed object comes here: the pre-checks walk managedFields without allocating.
  if (!knownPaths.size && !mayDrift(prev, next, controllerManagers)) return [];
  const isController = (m: string) => isControllerOf(m, controllerManagers);
  const isWriter = (e: { manager?: string; subresource?: string | undefined }) =>
    !!e.manager && !isController(e.manager) && e.subresource !== 'status';
  const flatPrev = flattenObject(prev);
  const flatNext = flattenObject(next);
  const changed = changedLeaves(flatPrev, flatNext);
  if (!changed.length) return [];
  const ownersPrev = ownersByPath(prev);
  const ownersNext = ownersByPath(next);
  const target = groupKindOf(next);
  const byEntry = new Map<string, DriftWrite>();
  for (const path of changed) {
    const now = ownersOfPath(ownersNext, path);
    const them = now.filter(isWriter);
    if (!them.length) continue;
    const declared =
      knownPaths.has(path) ||
      now.some((o) => isController(o.manager)) ||
      ownersOfPath(ownersPrev, path).some((o) => isController(o.manager));
    const from = flatPrev.get(path);
    const to = flatNext.get(path);
    for (const o of them) {
      const interactive = isInteractiveManager(o.manager);
      if (!declared && !interactive) continue;
      // Argo Rollouts / Flagger writing what their source writes (delivery-writes.ts): theirs, never drift.
      // A field of theirs outside the rules falls through: a conflict, shown, not silently accepted.
      if (!interactive && isDeliveryWrite(o.manager, target, path)) continue;
      const k = entryKey(o);
      let w = byEntry.get(k);
      if (!w) {
        w = {
          kind: interactive ? 'person' : 'conflict',
          manager: o.manager,
          operation: o.operation === 'Apply' ? 'Apply' : 'Update',
          ...(o.subresource ? { subresource: o.subresource } : {}),
          ...(o.time ? { time: o.time } : {}),
          fields: [],
        };
        byEntry.set(k, w);
      }
      w.fields.push({ path, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) });
    }
  }
  const out = [...byEntry.values()];
  for (const w of out) w.fields.sort((a, b) => a.path.localeCompare(b.path));
  return out;
}

export type DriftEnd = 'reverted' | 'adopted';

/** One object's open drift episode, as the app shows it. */
export interface ObjectDrift {
  ref: ObjectRef;
  kind: DriftWrite['kind'];
  /** the drifting managers, first writer first */
  managers: string[];
  fields: DriftField[];
  /** the managedFields time of the first write of the episode, and of the latest */
  since: string;
  lastWriteAt: string;
  /** writes coalesced into this episode */
  writes: number;
  /** how long after the controller's last apply the first write came, when that apply's time is known */
  afterApplyMs?: number;
}

/** An app's drift: its objects' open episodes (bounded), newest write first. */
export interface AppDrift {
  since: string;
  lastWriteAt: string;
  /** person when any object's drift is a person's, else conflict */
  kind: DriftWrite['kind'];
  managers: string[];
  objectCount: number;
  objects: ObjectDrift[];
}

/**
 * Whether an open drift episode on this object ended with `next`, field by field:
 * - a field holds Git's value again (`from`; a field added by hand is gone): reverted;
 * - the controller owns it with the drifted value and applied after the episode's last write: adopted
 *   (someone changed Git to the live value);
 * - otherwise it is still open — in particular while the controller owns the drifted value without having
 *   applied since: Flux first hands kubectl's fields to itself (a managedFields patch) and then applies Git,
 *   so that moment is neither a revert nor an adoption.
 * The episode ends when every field has: `adopted` when all were adopted, `reverted` otherwise.
 */
export function driftEnded(
  next: Obj,
  episode: { managers: readonly string[]; fields: DriftField[]; lastWriteAt?: string },
  controllerManagers: readonly string[],
): DriftEnd | undefined {
  const owners = ownersByPath(next);
  const isController = (m: string) => controllerManagers.includes(m) || isGitOpsControllerManager(m);
  const flat = flattenObject(next);
  const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) : NaN);
  const lastWrite = seconds(episode.lastWriteAt);
  const appliedSince = entries(next).some(
    (e) =>
      isController(e.manager) &&
      e.subresource !== 'status' &&
      (Number.isNaN(lastWrite) || seconds(e.time) >= lastWrite),
  );
  let adopted = true;
  for (const f of episode.fields) {
    const now = valueAt(flat, f.path);
    if (same(now, f.from)) {
      adopted = false;
      continue;
    }
    const controllerOwns = ownersOfPath(owners, f.path).some((o) => isController(o.manager));
    if (!(controllerOwns && appliedSince && same(now, f.to))) return undefined;
  }
  return adopted ? 'adopted' : 'reverted';
}
