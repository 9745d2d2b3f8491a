// When a server-side apply of Git's object would change nothing live, proved from the live object and its
// managedFields alone — so the diff need not ask the apiserver for a dry-run (issue 27: the first whole-app diff
// was CPU-bound on 2 cores, most of it dry-runs of objects nobody changed). Pure.
//
// A server-side apply of `desired` as field manager M (force) changes the live object in two ways only:
//   1. a field Git sets to another value than live's — ruled out by comparing every field Git sets: scalars
//      strictly equal; a list or map M owns as a whole (atomic: its entry in M's fieldsV1 has no children), or
//      one M does not own at all, deep-equal; a granular list (children `k:`/`v:`/`i:`) of the same length, each
//      element matched to M's entry for it in order and compared the same way;
//   2. a field M applied before that Git no longer sets (and no other manager shares) is removed — ruled out by
//      requiring every field in M's Apply entry to be in Git's object.
// Anything not proved this way answers false, and the caller asks the apiserver as before: no Apply entry of M,
// one recorded under another apiVersion, any other manager's write to the object itself (only status and scale
// writers are allowed), another type, a different list order, a Secret, a SOPS object. Defaulting and mutating
// admission are assumed to be idempotent: with no other writer, live went through them when M last applied.
// A review found the cases the apiVersion and other-writer rules close (a CRD version or schema that turned a
// granular field atomic, seen on a real apiserver); test/integration/apply-noop.test.ts checks the proofs
// against real dry-runs.
type Obj = Record<string, unknown>;
type Fields = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObj(a)) {
    if (!isObj(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const childKeys = (fs: Fields) => Object.keys(fs).filter((k) => k !== '.');

function parseKey(k: string): unknown {
  try {
    return JSON.parse(k.slice(2));
  } catch {
    return undefined;
  }
}

/**
 * A list element's key field as the apiserver keys it: a port's `protocol` left out in Git is keyed as its
 * default, TCP (the one defaulted list-map key field of the built-in kinds: container, Service and endpoint ports).
 */
const keyField = (el: Obj, f: string): unknown =>
  (Object.hasOwn(el, f) ? el[f] : undefined) ?? (f === 'protocol' ? 'TCP' : undefined);

/** M's fieldsV1 entry for list element `el` at index `i` (a granular list), if any */
function elementEntry(fs: Fields, el: unknown, i: number): Fields | undefined {
  for (const k of childKeys(fs)) {
    const sub = fs[k];
    if (!isObj(sub)) continue;
    if (k.startsWith('k:')) {
      const key = parseKey(k);
      if (isObj(key) && isObj(el) && Object.entries(key).every(([f, v]) => deepEqual(keyField(el, f), v))) return sub;
    } else if (k.startsWith('v:')) {
      if (deepEqual(parseKey(k), el)) return sub;
    } else if (k === `i:${i}`) return sub;
  }
  return undefined;
}

/** Git's value `d` is what live holds (`l`), given M's fieldsV1 entry for this node (undefined: M owns none of it) */
function sameAsLive(d: unknown, l: unknown, fs: Fields | undefined): boolean {
  if (d === null || typeof d !== 'object') return d === l;
  const granular = fs !== undefined && childKeys(fs).length > 0;
  if (!granular) return deepEqual(d, l);
  if (Array.isArray(d)) {
    if (!Array.isArray(l) || l.length !== d.length) return false;
    if (!childKeys(fs).every((k) => /^[kvi]:/.test(k))) return false;
    return d.every((el, i) => {
      // Git's element and live's at that place are the same element of M's (same key), and hold the same values
      const sub = elementEntry(fs, el, i);
      return sub !== undefined && elementEntry(fs, l[i], i) === sub && sameAsLive(el, l[i], sub);
    });
  }
  if (!isObj(l)) return false;
  return Object.entries(d as Obj).every(([k, v]) => {
    const sub = fs[`f:${k}`];
    return sameAsLive(v, l[k], isObj(sub) ? sub : undefined);
  });
}

/** Every field in M's entry is still in Git's object (else the apply would remove it). */
function everyOwnedInGit(fs: Fields, d: unknown): boolean {
  for (const k of childKeys(fs)) {
    const sub = fs[k];
    const subFs = isObj(sub) ? sub : {};
    let next: unknown;
    if (k.startsWith('f:')) {
      if (!isObj(d) || !Object.hasOwn(d, k.slice(2)) || d[k.slice(2)] === undefined) return false;
      next = d[k.slice(2)];
    } else if (k.startsWith('k:') || k.startsWith('v:') || k.startsWith('i:')) {
      if (!Array.isArray(d)) return false;
      next = d.find((el, i) => elementEntry({ [k]: subFs }, el, i) !== undefined);
      if (next === undefined) return false;
    } else return false; // a prefix this code does not know
    if (childKeys(subFs).length > 0 && !everyOwnedInGit(subFs, next)) return false;
  }
  return true;
}

interface ManagedFieldsEntry {
  manager?: string;
  apiVersion?: string;
  operation?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

/**
 * True when a server-side apply of `desired` as `manager` (force) provably leaves `live` as it is (see the
 * header); false whenever that is not proved.
 */
export function applyChangesNothing(desired: Obj, live: Obj, manager: string): boolean {
  if (desired.apiVersion !== live.apiVersion || desired.kind !== live.kind) return false;
  const md = isObj(live.metadata) ? live.metadata : {};
  const entries = Array.isArray(md.managedFields) ? (md.managedFields as ManagedFieldsEntry[]) : [];
  // M's one Apply entry, recorded under Git's apiVersion (its fieldsV1 follows that version's schema), and no
  // other writer of the object itself: another manager's fields inside one M owns granularly could be dropped
  // by a schema that became atomic since (the apiserver rewrites fieldsV1 only at the next write), and an
  // object people edited is exactly the one to ask the apiserver about. Status and scale writers do not count.
  const mine = entries.filter((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource);
  const others = entries.filter((e) => !mine.includes(e) && e.subresource !== 'status' && e.subresource !== 'scale');
  if (mine.length !== 1 || others.length > 0) return false;
  const fs = mine[0]?.fieldsV1;
  if (mine[0]?.apiVersion !== desired.apiVersion) return false;
  if (mine[0]?.fieldsType !== 'FieldsV1' || !isObj(fs)) return false;
  const { status: _status, ...rest } = desired;
  return (
    Object.entries(rest).every(([k, v]) => {
      if (k === 'apiVersion' || k === 'kind') return true;
      if (k === 'metadata')
        return isObj(v) && metadataSame(v, md, isObj(fs['f:metadata']) ? fs['f:metadata'] : undefined);
      const sub = fs[`f:${k}`];
      return sameAsLive(v, live[k], isObj(sub) ? sub : undefined);
    }) && everyOwnedInGit(fs, desired)
  );
}

/** metadata: name and namespace are not in fieldsV1; the rest (labels, annotations, …) as any other field */
function metadataSame(d: Obj, l: Obj, fs: Fields | undefined): boolean {
  return Object.entries(d).every(([k, v]) => {
    if (k === 'name' || k === 'namespace') return v === l[k];
    if (k === 'managedFields' || k === 'resourceVersion' || k === 'uid' || k === 'creationTimestamp') return false;
    const sub = fs?.[`f:${k}`];
    return sameAsLive(v, l[k], isObj(sub) ? sub : undefined);
  });
}
