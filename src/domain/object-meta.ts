// An object's metadata as plain data, and who wrote it last: the one reading of `metadata` and of the newest
// `metadata.managedFields` entry that the tree, drift, prune and freeze code share.

/** A Kubernetes object as plain JSON. */
export type Obj = Record<string, unknown>;

/** One `metadata.managedFields` entry (fieldsV1 decoded by managed-fields.ts). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

export interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

/** The object's metadata, `{}` when it has none (or something that is not an object). */
export const metaOf = (o: Obj): ObjectMeta =>
  o.metadata && typeof o.metadata === 'object' && !Array.isArray(o.metadata) ? (o.metadata as ObjectMeta) : {};

/**
 * The newest `managedFields` entry by its time (second resolution on the apiserver): among entries of the same
 * time the first listed wins. `undefined` when the object has none.
 */
export function newestManagedEntry(o: Obj): ManagedFieldsEntry | undefined {
  const mf = metaOf(o).managedFields;
  if (!Array.isArray(mf) || mf.length === 0) return undefined;
  let best = mf[0];
  for (const m of mf) if ((m?.time ?? '') > (best?.time ?? '')) best = m;
  return best;
}

/** The field manager of the newest managedFields entry: who wrote the object last, as far as the apiserver says. */
export function lastWriter(o: Obj): string | undefined {
  const m = newestManagedEntry(o)?.manager;
  return typeof m === 'string' && m !== '' ? m : undefined;
}
