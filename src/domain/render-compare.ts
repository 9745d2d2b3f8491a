// Two recorded renders compared (issue 28: "compare any two releases"): objects added, removed and changed, and for
// each changed object its fields as the field diff flattens them (keyed lists by their merge keys), from → to.
// Both sides are stored, masked renders: a Secret's values compare as their masks.
import { flattenObject } from './field-diff.ts';

type Obj = Record<string, unknown>;

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface RenderCompare {
  added: ObjectRef[];
  removed: ObjectRef[];
  changed: Array<ObjectRef & { fields: Array<{ path: string; from?: unknown; to?: unknown }> }>;
  unchanged: number;
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
// the group (not the version) names an object: a render moving to a new apiVersion changes it, not replaces it
const keyOf = (r: ObjectRef) =>
  `${r.apiVersion.includes('/') ? r.apiVersion.split('/')[0] : ''}/${r.kind}/${r.namespace ?? ''}/${r.name}`;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function compareRenders(from: readonly Obj[], to: readonly Obj[]): RenderCompare {
  const a = new Map(from.map((o) => [keyOf(refOf(o)), o]));
  const b = new Map(to.map((o) => [keyOf(refOf(o)), o]));
  const out: RenderCompare = { added: [], removed: [], changed: [], unchanged: 0 };
  for (const [k, o] of b) if (!a.has(k)) out.added.push(refOf(o));
  for (const [k, o] of a) {
    const other = b.get(k);
    if (!other) {
      out.removed.push(refOf(o));
      continue;
    }
    const fa = flattenObject(o);
    const fb = flattenObject(other);
    const fields: RenderCompare['changed'][number]['fields'] = [];
    for (const p of new Set([...fa.keys(), ...fb.keys()])) {
      const x = fa.get(p);
      const y = fb.get(p);
      if (!same(x, y)) fields.push({ path: p, ...(fa.has(p) ? { from: x } : {}), ...(fb.has(p) ? { to: y } : {}) });
    }
    if (String(o.apiVersion) !== String(other.apiVersion))
      fields.unshift({ path: 'apiVersion', from: o.apiVersion, to: other.apiVersion });
    if (fields.length)
      out.changed.push({ ...refOf(other), fields: fields.sort((p, q) => p.path.localeCompare(q.path)) });
    else out.unchanged++;
  }
  const order = (x: ObjectRef, y: ObjectRef) => keyOf(x).localeCompare(keyOf(y));
  out.added.sort(order);
  out.removed.sort(order);
  out.changed.sort(order);
  return out;
}
