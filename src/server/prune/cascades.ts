// What deleting the candidates of a plan takes with it, gathered with the one cascade walk (domain/prune.ts
// cascadeWalk): ownerReferences children from the informer cache and from everything listed live, a Namespace's
// contents and a CRD's custom resources listed live (cascade-live.ts, metadata only), and which of those reaches
// are not fully known. The plan (planPrune) and the approval's re-check (snapshot.ts) judge each candidate on it.
import { cascadeWalk, liveKey as keyOf, type CascadeUnknown } from '../../domain/prune.ts';
import { metaOf, type Obj } from '../../domain/object-meta.ts';
import type { PruneContext } from './context.ts';
import { customResources, namespaceContents, namespacedKinds, type ListableKind, type Listed } from './cascade-live.ts';

/** At most this many rounds of listing what a walk reached (each round lists at least one new reach). */
const MAX_ROUNDS = 8;

export interface Gathered {
  /** everything the roots' deletion takes with it, each once, never a root */
  live: Obj[];
  /** the namespaces and CRD kinds whose contents are not fully known, each with the sentence why */
  unknown: Required<CascadeUnknown>;
}

/**
 * Everything deleting `roots` takes with it, read now. A Namespace or CRD reached is listed live; what is listed
 * can own another Namespace or CRD, so the walk repeats until it reaches nothing new.
 */
export async function gatherCascades(ctx: PruneContext, cluster: string, roots: Obj[]): Promise<Gathered> {
  const conn = ctx.deps.conn(cluster);
  const namespaces = new Map<string, Listed>();
  const crds = new Map<string, Listed>();
  let discovered: Promise<{ kinds: ListableKind[]; failed: string[] } | { error: string }> | undefined;
  const discover = () =>
    (discovered ??= namespacedKinds(conn).catch((e: unknown) => ({
      error: e instanceof Error ? e.message : String(e),
    })));
  let walked: Obj[] = [];
  for (let round = 0; ; round++) {
    // children by owner uid among everything listed live (the cache holds only the kinds it watches)
    const listedChildren = new Map<string, Obj[]>();
    for (const l of [...namespaces.values(), ...crds.values()])
      for (const o of l.objects)
        for (const ow of metaOf(o).ownerReferences ?? [])
          if (ow.uid) {
            const l = listedChildren.get(ow.uid);
            if (l) l.push(o);
            else listedChildren.set(ow.uid, [o]);
          }
    const wantNs = new Set<string>();
    const wantCrd = new Map<string, Obj>();
    walked = cascadeWalk(roots, {
      childrenOf: (uid) => [...ctx.deps.index.childrenOf(cluster, uid), ...(listedChildren.get(uid) ?? [])],
      inNamespace: (ns) => {
        const l = namespaces.get(ns);
        if (!l) wantNs.add(ns);
        return l?.objects ?? [];
      },
      ofKind: (group, kind, crd) => {
        const l = crds.get(`${group}/${kind}`);
        if (!l) wantCrd.set(`${group}/${kind}`, crd);
        return l?.objects ?? [];
      },
    }).objects;
    if (!wantNs.size && !wantCrd.size) break;
    if (round >= MAX_ROUNDS) {
      // never reached in practice; what was not listed is unknown, not empty
      for (const ns of wantNs)
        namespaces.set(ns, { objects: [], unknown: `ns ${ns} was not listed: the namespace's contents are unknown` });
      for (const [k] of wantCrd)
        crds.set(k, { objects: [], unknown: `${k} was not listed: the CRD's custom resources are unknown` });
      continue;
    }
    await Promise.all([
      ...[...wantNs].map(async (ns) => {
        const d = await discover();
        namespaces.set(
          ns,
          'error' in d
            ? {
                objects: [],
                unknown: `cannot discover the cluster's kinds (${d.error}): the contents of ns ${ns} are unknown`,
              }
            : await namespaceContents(conn, ns, d.kinds, d.failed),
        );
      }),
      ...[...wantCrd].map(async ([k, crd]) => crds.set(k, await customResources(conn, crd))),
    ]);
  }
  const rootKeys = new Set(roots.map(keyOf));
  const seen = new Set<string>();
  const live = walked.filter((o) => {
    const k = keyOf(o);
    if (rootKeys.has(k) || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const unknownOf = (m: Map<string, Listed>) =>
    new Map([...m].flatMap(([k, l]) => (l.unknown ? [[k, l.unknown] as const] : [])));
  return { live, unknown: { namespaces: unknownOf(namespaces), kinds: unknownOf(crds) } };
}
