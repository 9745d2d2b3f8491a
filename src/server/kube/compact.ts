// The informers' copies at 250,000 objects (issue 27): every object's `metadata.managedFields[].fieldsV1` is
// a tree of field names that repeats across objects of one shape (the 23 ConfigMaps of an app, the Pods of a
// ReplicaSet, every kubelet status write). One shared, frozen copy per distinct tree saves about 40 % of a
// ConfigMap's heap (bench/scale.ts prints the BFF's cost per object). Shared copies are frozen: code that
// tried to change one would throw instead of changing every object that shares it. Nothing here keeps a tree
// alive: the table holds weak references and forgets a tree once no cached object uses it.

const table = new Map<string, WeakRef<object>>();
const forget = new FinalizationRegistry<string>((key) => {
  const ref = table.get(key);
  if (ref && ref.deref() === undefined) table.delete(key);
});

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as Record<string, unknown>)) deepFreeze(v);
  }
  return o;
}

/** The shared copy of a fieldsV1 tree equal to `tree` (it becomes the shared copy when it is the first). */
export function internTree(tree: object): object {
  const key = JSON.stringify(tree);
  const have = table.get(key)?.deref();
  if (have) return have;
  deepFreeze(tree);
  table.set(key, new WeakRef(tree));
  forget.register(tree, key);
  return tree;
}

/** `obj` with its managedFields' trees shared (in place: the informer's own fresh copy from the apiserver). */
export function compactObject<T extends { metadata?: object }>(obj: T): T {
  const mf = (obj.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  if (!Array.isArray(mf)) return obj;
  for (const e of mf as Array<{ fieldsV1?: unknown }>) {
    if (e && typeof e === 'object' && e.fieldsV1 && typeof e.fieldsV1 === 'object') e.fieldsV1 = internTree(e.fieldsV1);
  }
  return obj;
}

/** distinct trees in the table (tests, metrics) */
export const internedTrees = (): number => table.size;
