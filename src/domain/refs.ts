/** A reference to one Kubernetes object in one cluster. */
export interface ObjectRef {
  cluster: string;
  group: string;
  version: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** Canonical id: cluster/group/kind/namespace/name ("core" for the core group, "_" for cluster-scoped). */
export function refId(r: ObjectRef): string {
  return `${r.cluster}/${r.group || 'core'}/${r.kind}/${r.namespace || '_'}/${r.name}`;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/**
 * Flux inventory entry ids are `<namespace>_<name>_<group>_<kind>` (namespace
 * empty for cluster-scoped objects). Names and namespaces are DNS labels or
 * subdomains, so they never contain "_".
 */
export function parseFluxInventoryId(cluster: string, id: string, version: string): ObjectRef | undefined {
  const parts = id.split('_');
  if (parts.length !== 4) return undefined;
  const [namespace, name, group, kind] = parts as [string, string, string, string];
  if (!name || !kind) return undefined;
  return { cluster, group, version, kind, ...(namespace ? { namespace } : {}), name };
}
