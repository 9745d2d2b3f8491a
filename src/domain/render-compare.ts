// Two recorded renders compared (issue 28: "compare any two releases"): objects added, removed and changed, and for
// each changed object its fields as the field diff flattens them (keyed lists by their merge keys), from → to.
// Both sides are stored, masked renders: a Secret's values compare as their masks.
//
// Across environments (issue 40: the same app's dev and staging renders, `compare?toApp=`) each side lives in its
// own namespace, so objects are matched by their identity within their app: group, kind, name, and the namespace
// relative to the app's target (`targets`): an object in the one app's target namespace is the object of the same
// kind and name in the other's; a cluster-scoped object, or one in any other namespace, keeps its namespace. A
// kustomize-generated name (`env-settings-<hash>`: the hash of its data, so it differs wherever the data does) is
// matched by the name before the hash when exactly one such object is left unmatched on each side.
import { flattenObject } from './field-diff.ts';

type Obj = Record<string, unknown>;

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export type ChangedObject = ObjectRef & {
  /** matched across environments: the from side's namespace, where it is not `namespace` */
  fromNamespace?: string;
  /** matched by a generated name's stem: the from side's name, where it is not `name` */
  fromName?: string;
  fields: Array<{ path: string; from?: unknown; to?: unknown }>;
};

export interface RenderCompare {
  added: ObjectRef[];
  removed: ObjectRef[];
  changed: ChangedObject[];
  unchanged: number;
}

/** Each side's target namespace (targetNamespace()): objects there are matched with the other side's. */
export interface CompareTargets {
  from: string | null;
  to: string | null;
}

const refOf = (o: Obj): ObjectRef => {
  const md = (o.metadata ?? {}) as { namespace?: unknown; name?: unknown };
  return {
    apiVersion: String(o.apiVersion ?? ''),
    kind: String(o.kind ?? ''),
    ...(typeof md.namespace === 'string' && md.namespace ? { namespace: md.namespace } : {}),
    name: String(md.name ?? ''),
  };
};
const groupOf = (r: ObjectRef) => (r.apiVersion.includes('/') ? (r.apiVersion.split('/')[0] ?? '') : '');
/** what stands for the app's target namespace in a key: no namespace name has a `~` (DNS labels) */
const TARGET = '~target';
const nsKey = (r: ObjectRef, target: string | null) =>
  r.namespace === undefined ? '' : target !== null && r.namespace === target ? TARGET : r.namespace;
// the group (not the version) names an object: a render moving to a new apiVersion changes it, not replaces it
const keyOf = (r: ObjectRef, target: string | null = null, name = r.name) =>
  `${groupOf(r)}/${r.kind}/${nsKey(r, target)}/${name}`;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** kustomize's generator suffix: `-` and 10 characters of its hash alphabet (hex with 0 1 3 a e replaced) */
const GENERATED = /^(.+)-[2456789bcdfghkmt]{10}$/;

/**
 * The namespace an app's render targets: the one most of its namespaced objects are in (a Flux targetNamespace, an
 * overlay's `namespace:`, Argo CD's destination all put them there); null when it has no namespaced object or two
 * namespaces hold the most (then nothing is matched across namespaces).
 */
export function targetNamespace(objects: readonly Obj[]): string | null {
  const counts = new Map<string, number>();
  for (const o of objects) {
    const ns = refOf(o).namespace;
    if (ns !== undefined) counts.set(ns, (counts.get(ns) ?? 0) + 1);
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  const [first, second] = ranked;
  return first && (!second || second[1] < first[1]) ? first[0] : null;
}

function fieldsOf(o: Obj, other: Obj, relativeNamespace: boolean): ChangedObject['fields'] {
  const fa = flattenObject(o);
  const fb = flattenObject(other);
  const fields: ChangedObject['fields'] = [];
  for (const p of new Set([...fa.keys(), ...fb.keys()])) {
    // matched as each app's target namespace: the namespace is the object's identity, not a change
    if (relativeNamespace && p === 'metadata.namespace') continue;
    const x = fa.get(p);
    const y = fb.get(p);
    if (!same(x, y)) fields.push({ path: p, ...(fa.has(p) ? { from: x } : {}), ...(fb.has(p) ? { to: y } : {}) });
  }
  if (String(o.apiVersion) !== String(other.apiVersion))
    fields.unshift({ path: 'apiVersion', from: o.apiVersion, to: other.apiVersion });
  return fields.sort((p, q) => p.path.localeCompare(q.path));
}

/**
 * `from` and `to` compared. `targets` (two apps compared, e.g. one app in two environments): each side's target
 * namespace, matched as one; without it (one app's two releases) an object's namespace is its own.
 */
export function compareRenders(from: readonly Obj[], to: readonly Obj[], targets?: CompareTargets): RenderCompare {
  const ta = targets?.from ?? null;
  const tb = targets?.to ?? null;
  const a = new Map(from.map((o) => [keyOf(refOf(o), ta), o]));
  const b = new Map(to.map((o) => [keyOf(refOf(o), tb), o]));
  const out: RenderCompare = { added: [], removed: [], changed: [], unchanged: 0 };
  const pairs: Array<[Obj, Obj]> = [];
  let removed: Obj[] = [];
  for (const [k, o] of a) {
    const other = b.get(k);
    if (other) pairs.push([o, other]);
    else removed.push(o);
  }
  let added = [...b].filter(([k]) => !a.has(k)).map(([, o]) => o);
  if (targets) {
    // generated names: one left on each side with the same stem (and kind, group, relative namespace) is one object
    const byStem = (objs: Obj[], t: string | null) => {
      const m = new Map<string, Obj[]>();
      for (const o of objs) {
        const r = refOf(o);
        const stem = GENERATED.exec(r.name)?.[1];
        if (stem) m.set(keyOf(r, t, stem), [...(m.get(keyOf(r, t, stem)) ?? []), o]);
      }
      return m;
    };
    const theirs = byStem(added, tb);
    const paired = new Set<Obj>();
    for (const [k, ours] of byStem(removed, ta)) {
      const match = theirs.get(k);
      if (ours.length !== 1 || match?.length !== 1 || !ours[0] || !match[0]) continue;
      pairs.push([ours[0], match[0]]);
      paired.add(ours[0]).add(match[0]);
    }
    removed = removed.filter((o) => !paired.has(o));
    added = added.filter((o) => !paired.has(o));
  }
  out.added = added.map(refOf);
  out.removed = removed.map(refOf);
  for (const [o, other] of pairs) {
    const ra = refOf(o);
    const rb = refOf(other);
    const relative = !!targets && ra.namespace !== rb.namespace;
    const fields = fieldsOf(o, other, relative);
    if (!fields.length) {
      out.unchanged++;
      continue;
    }
    out.changed.push({
      ...rb,
      ...(ra.namespace !== undefined && ra.namespace !== rb.namespace ? { fromNamespace: ra.namespace } : {}),
      ...(ra.name !== rb.name ? { fromName: ra.name } : {}),
      fields,
    });
  }
  const order = (t: string | null) => (x: ObjectRef, y: ObjectRef) => keyOf(x, t).localeCompare(keyOf(y, t));
  out.added.sort(order(tb));
  out.removed.sort(order(ta));
  out.changed.sort(order(tb));
  return out;
}
