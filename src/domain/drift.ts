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
 * `/scale`, a cloud controller) it is a conflict. A field Git does not declare
 * (an HPA scaling a Deployment whose replicas Git leaves out) is no drift.
 * Status writes, the controller's own writes and writes that change no value
 * are no drift either (the full diff would show nothing).
 */
import { isGitOpsControllerManager, isInteractiveManager } from './field-managers.ts';
import { flattenObject } from './field-diff.ts';
import { ownersByPath, type FieldOwner } from './managed-fields.ts';
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
const entryKey = (e: Entry) => `${e.manager}\u0000${e.operation}\u0000${e.subresource ?? ''}`;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The value at a path: the leaf, or the subtree's leaves when the path names a map or list item. */
function valueAt(flat: Map<string, unknown>, path: string): unknown {
  if (flat.has(path)) return flat.get(path);
  const sub: Record<string, unknown> = {};
  for (const [p, v] of flat) if (p.startsWith(`${path}.`) || p.startsWith(`${path}[`)) sub[p.slice(path.length)] = v;
  return Object.keys(sub).length ? sub : undefined;
}

/**
 * The drifting writes between `prev` and `next` of one object: for each non-controller manager whose
 * managedFields entry is new or refreshed (time or fields changed), the Git-declared fields it owns now
 * whose value changed.
 */
export function driftWrites(
  prev: Obj | undefined,
  next: Obj,
  controllerManagers: readonly string[],
  /** paths known to be Git's although the controller no longer owns them (an open drift episode's fields) */
  known: Iterable<string> = [],
): DriftWrite[] {
  if (!prev) return [];
  const knownPaths = new Set(known);
  const isController = (m: string) => controllerManagers.includes(m) || isGitOpsControllerManager(m);
  const before = new Map(entries(prev).map((e) => [entryKey(e), e]));
  const fresh = entries(next).filter((e) => {
    if (!e.manager || isController(e.manager) || e.subresource === 'status') return false;
    const old = before.get(entryKey(e));
    return !old || old.time !== e.time || !same(old.fieldsV1, e.fieldsV1);
  });
  if (!fresh.length) return [];
  const ownersPrev = ownersByPath(prev);
  const ownersNext = ownersByPath(next);
  const gitDeclared = (path: string) =>
    knownPaths.has(path) ||
    (ownersPrev[path] ?? []).some((o) => isController(o.manager)) ||
    (ownersNext[path] ?? []).some((o) => isController(o.manager));
  const flatPrev = flattenObject(prev);
  const flatNext = flattenObject(next);
  const out: DriftWrite[] = [];
  for (const e of fresh) {
    const fields: DriftField[] = [];
    for (const [path, owners] of Object.entries(ownersNext)) {
      if (!owners.some((o) => o.manager === e.manager && o.operation === e.operation)) continue;
      if (!gitDeclared(path)) continue;
      const from = valueAt(flatPrev, path);
      const to = valueAt(flatNext, path);
      if (same(from, to)) continue;
      fields.push({ path, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) });
    }
    if (!fields.length) continue;
    out.push({
      kind: isInteractiveManager(e.manager) ? 'person' : 'conflict',
      manager: e.manager,
      operation: e.operation === 'Apply' ? 'Apply' : 'Update',
      ...(e.subresource ? { subresource: e.subresource } : {}),
      ...(e.time ? { time: e.time } : {}),
      fields: fields.sort((a, b) => a.path.localeCompare(b.path)),
    });
  }
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
 * Whether an open drift episode on this object ended with `next`: every drifted field is owned by the
 * controller again (no longer by the drifting manager). `adopted` when Git now has the drifted value
 * (someone changed Git to the live value), `reverted` otherwise (the controller put Git's value back).
 * undefined while any field is still the drifting manager's.
 */
export function driftEnded(
  next: Obj,
  episode: { managers: readonly string[]; fields: DriftField[] },
  controllerManagers: readonly string[],
): DriftEnd | undefined {
  const owners = ownersByPath(next);
  const isController = (m: string) => controllerManagers.includes(m) || isGitOpsControllerManager(m);
  const flat = flattenObject(next);
  let adopted = true;
  for (const f of episode.fields) {
    const os = owners[f.path] ?? [];
    const now = valueAt(flat, f.path);
    const stillTheirs = os.some((o) => episode.managers.includes(o.manager));
    const controllerOwns = os.some((o) => isController(o.manager));
    // the field is back with the controller; or its value is Git's again (a field Git left out is gone)
    if (stillTheirs && !controllerOwns && !same(now, f.from)) return undefined;
    if (!same(now, f.to)) adopted = false;
  }
  return adopted ? 'adopted' : 'reverted';
}
