/**
 * The prune plan: which objects a controller's prune would delete, what each
 * deletion takes with it, what protects an object, and whether the plan is
 * safe to approve as is. Pure; table-tested (prune.test.ts).
 *
 * Candidates are the controller's inventory minus the desired render, by
 * group, kind, namespace and name (the version may differ). An unknown render
 * (`desired === null`: the render or the fetch failed) gives `unknown` and no
 * candidates — unknown is never empty. An empty render of a non-empty
 * inventory, more deletions than `maxDeletions`, or a larger fraction of the
 * inventory than `maxFraction` needs an override (two approvers and a typed
 * confirmation). Protected candidates are listed, never deleted, and do not
 * count as deletions.
 *
 * What a deletion takes with it is governed as the candidate itself: a
 * candidate whose deletion would take a protected object with it (an
 * ownerReferences child, an object of a Namespace, a custom resource of a CRD)
 * is blocked, named ("its Pod dev/x is protected (…)"); one whose cascade is
 * not fully known (a kind that could not be listed) is not deleted, and the
 * plan says so — `unknown` when nothing else would be deleted, never
 * "nothing". The count limit counts every object the deletions remove,
 * cascades included, each once.
 */
import { metaOf, type Obj } from './object-meta.ts';
import type { ObjectRef } from './refs.ts';

export interface PruneLimits {
  maxDeletions: number;
  maxFraction: number;
}

export interface PruneCandidate {
  ref: ObjectRef;
  /** the annotation/label that protects it, verbatim, e.g. 'argocd.argoproj.io/sync-options: Prune=false' */
  protectedBy: string | null;
  /**
   * a protected object its deletion would take with it, e.g. 'its Pod dev/x is protected
   * (kustomize.toolkit.fluxcd.io/prune: disabled)': the candidate is not deleted either
   */
  blockedBy: string | null;
  /**
   * why what its deletion would take with it is not fully known, e.g. 'cannot list
   * rbac.authorization.k8s.io/rolebindings in ns x: the namespace's contents are unknown': it is not deleted
   */
  cascadesUnknown: string | null;
  /** also deleted: ownerReferences children (recursively), a Namespace's contents, a CRD's custom resources */
  cascades: ObjectRef[];
  finalizers: string[];
}

export type PruneState = 'unknown' | 'nothing' | 'ready' | 'needs-override';

export interface PrunePlan {
  state: PruneState;
  reasons: string[];
  candidates: PruneCandidate[];
}

export const DEFAULT_PRUNE_LIMITS: PruneLimits = { maxDeletions: 20, maxFraction: 0.25 };

export const ARGO_SYNC_OPTIONS = 'argocd.argoproj.io/sync-options';
/** Argo CD's confirmation of pending deletions of an app with the sync option `Prune=confirm` (a timestamp) */
export const ARGO_DELETION_APPROVED = 'argocd.argoproj.io/deletion-approved';
/**
 * The console's note on an object it approved for the controller to prune: `<preview id>/<snapshot hash prefix>`.
 * A note for people: it approves nothing. The admission policy (deploy/prune-admission-policy.yaml) lets the GitOps
 * controllers delete only objects whose uid the console listed in its approvals ConfigMap (prune-approval.ts).
 */
export const PRUNE_APPROVED_ANNOTATION = 'gitops-console.dev/prune-approved';
export const approvalStamp = (previewId: string, snapshotHash: string): string =>
  `${previewId}/${snapshotHash.slice(0, 16)}`;
export const FLUX_PRUNE = 'kustomize.toolkit.fluxcd.io/prune';

/** group/kind/namespace/name: how the plan compares objects (the version may differ) */
export const pruneKey = (r: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>): string =>
  `${r.group}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

function refOfLive(cluster: string, o: Obj): ObjectRef {
  const av = String(o.apiVersion ?? 'v1');
  const i = av.indexOf('/');
  const m = metaOf(o);
  return {
    cluster,
    group: i < 0 ? '' : av.slice(0, i),
    version: i < 0 ? av : av.slice(i + 1),
    kind: String(o.kind ?? ''),
    ...(m.namespace ? { namespace: m.namespace } : {}),
    name: m.name ?? '',
  };
}

/** pruneKey of a live object (from its apiVersion, kind and metadata). */
export const liveKey = (o: Obj): string => pruneKey(refOfLive('', o));

/** What protects a live object from pruning, verbatim; null when nothing does. */
export function protectionOf(o: Obj | undefined): string | null {
  if (!o) return null;
  const m = metaOf(o);
  const opts = m.annotations?.[ARGO_SYNC_OPTIONS];
  if (opts && opts.split(',').some((x) => ['Prune=false', 'Delete=false'].includes(x.trim())))
    return `${ARGO_SYNC_OPTIONS}: ${opts}`;
  if (m.annotations?.[FLUX_PRUNE] === 'disabled') return `${FLUX_PRUNE}: disabled`;
  if (m.labels?.[FLUX_PRUNE] === 'disabled') return `${FLUX_PRUNE}: disabled (label)`;
  return null;
}

/** Where the cascade walk finds what a deletion takes with it; a reach whose lookup is absent is not walked. */
export interface CascadeLookups {
  /** the objects whose ownerReferences name this uid */
  childrenOf(uid: string): Obj[];
  /** the objects of a namespace (deleting the Namespace deletes them) */
  inNamespace?(namespace: string): Obj[];
  /** the custom resources of a group and kind (deleting their CustomResourceDefinition `crd` deletes them) */
  ofKind?(group: string, kind: string, crd: Obj): Obj[];
  /** why a namespace's contents are not fully known (a kind that could not be listed); undefined: they are */
  namespaceUnknown?(namespace: string): string | undefined;
  /** why a CRD's custom resources are not fully known; undefined: they are */
  kindUnknown?(group: string, kind: string): string | undefined;
}

/** What deleting some roots takes with it: the live objects in the order reached, and what could not be known. */
export interface CascadeResult {
  objects: Obj[];
  /** one sentence per reach whose contents are unknown ("cannot list secrets in ns x: …"); empty: all known */
  unknown: string[];
}

/** The group and kind of a CustomResourceDefinition's custom resources; undefined for any other object. */
function crdKindOf(o: Obj): { group: string; kind: string } | undefined {
  if (o.kind !== 'CustomResourceDefinition' || !String(o.apiVersion ?? '').startsWith('apiextensions.k8s.io/'))
    return undefined;
  const spec = (o.spec ?? {}) as { group?: string; names?: { kind?: string } };
  return spec.group && spec.names?.kind ? { group: spec.group, kind: spec.names.kind } : undefined;
}

/**
 * What deleting `roots` takes with it, as live objects in the order reached: ownerReferences children
 * (recursively), a Namespace's contents, a CRD's custom resources; with what could not be known (a namespace or a
 * kind its lookups say is unknown). The one cascade walk: the plan lists its result per candidate, the prune
 * service gathers with it the live objects the plan needs. Each object once (by pruneKey); an object whose key is
 * in `exclude` is neither listed nor walked further; a root is listed only when another root reaches it.
 */
export function cascadeWalk(
  roots: Obj[],
  lookups: CascadeLookups,
  exclude: ReadonlySet<string> = new Set(),
): CascadeResult {
  const out = new Map<string, Obj>();
  const unknown = new Set<string>();
  const queue: Obj[] = [...roots];
  const add = (o: Obj) => {
    const k = liveKey(o);
    if (exclude.has(k) || out.has(k)) return;
    out.set(k, o);
    queue.push(o);
  };
  for (let i = 0; i < queue.length; i++) {
    const o = queue[i] as Obj;
    const r = refOfLive('', o);
    const uid = metaOf(o).uid;
    if (uid) for (const c of lookups.childrenOf(uid)) add(c);
    if (r.group === '' && r.kind === 'Namespace' && lookups.inNamespace) {
      for (const c of lookups.inNamespace(r.name)) add(c);
      const why = lookups.namespaceUnknown?.(r.name);
      if (why) unknown.add(why);
    }
    const crd = crdKindOf(o);
    if (crd && lookups.ofKind) {
      for (const c of lookups.ofKind(crd.group, crd.kind, o)) add(c);
      const why = lookups.kindUnknown?.(crd.group, crd.kind);
      if (why) unknown.add(why);
    }
  }
  return { objects: [...out.values()], unknown: [...unknown] };
}

/** Namespaces and CRD kinds (`group/kind`) whose contents are not fully known, each with the sentence why. */
export interface CascadeUnknown {
  namespaces?: ReadonlyMap<string, string>;
  kinds?: ReadonlyMap<string, string>;
}

/** The cascade walk's lookups over a set of live objects (and what of them is unknown). */
export function lookupsOver(live: Obj[], unknown: CascadeUnknown = {}): CascadeLookups {
  const childrenOf = new Map<string, Obj[]>();
  const inNamespace = new Map<string, Obj[]>();
  const byGroupKind = new Map<string, Obj[]>();
  const push = (m: Map<string, Obj[]>, k: string, o: Obj) => {
    const l = m.get(k);
    if (l) l.push(o);
    else m.set(k, [o]);
  };
  for (const o of live) {
    const r = refOfLive('', o);
    const m = metaOf(o);
    for (const ow of m.ownerReferences ?? []) if (ow.uid) push(childrenOf, ow.uid, o);
    if (m.namespace) push(inNamespace, m.namespace, o);
    push(byGroupKind, `${r.group}/${r.kind}`, o);
  }
  return {
    childrenOf: (uid) => childrenOf.get(uid) ?? [],
    inNamespace: (ns) => inNamespace.get(ns) ?? [],
    ofKind: (group, kind) => byGroupKind.get(`${group}/${kind}`) ?? [],
    namespaceUnknown: (ns) => unknown.namespaces?.get(ns),
    kindUnknown: (group, kind) => unknown.kinds?.get(`${group}/${kind}`),
  };
}

const where = (r: Pick<ObjectRef, 'namespace' | 'name'>) => (r.namespace ? `${r.namespace}/${r.name}` : r.name);

/**
 * What deleting one live object takes with it, judged: the objects (never the root itself), the first protected
 * one among them as "its Pod dev/x is protected (…)" (`blockedBy`), and why any of it is unknown. Either makes
 * the object one that is not deleted: a deletion never takes a protected object, or an unknown set, with it.
 */
export function judgeCascade(
  root: Obj,
  lookups: CascadeLookups,
  cluster = '',
): { cascades: ObjectRef[]; blockedBy: string | null; unknown: string | null } {
  const rootRef = refOfLive(cluster, root);
  const walk = cascadeWalk([root], lookups, new Set([pruneKey(rootRef)]));
  const protectedOnes = walk.objects
    .map((o) => ({ o, by: protectionOf(o) }))
    .filter((x): x is { o: Obj; by: string } => x.by !== null);
  const first = protectedOnes[0];
  let blockedBy: string | null = null;
  if (first) {
    const r = refOfLive(cluster, first.o);
    const more = protectedOnes.length - 1;
    blockedBy = `its ${r.kind} ${where(r)} is protected (${first.by})${more ? `, and ${more} more object${more === 1 ? '' : 's'} it takes with it ${more === 1 ? 'is' : 'are'}` : ''}`;
  }
  return {
    cascades: walk.objects.map((o) => refOfLive(cluster, o)).sort((a, b) => pruneKey(a).localeCompare(pruneKey(b))),
    blockedBy,
    unknown: walk.unknown.length ? walk.unknown.join('; ') : null,
  };
}

/** Whether a candidate is deleted by an approval: not protected, not blocked by what it takes with it, all known. */
export const willDelete = (c: Pick<PruneCandidate, 'protectedBy' | 'blockedBy' | 'cascadesUnknown'>): boolean =>
  !c.protectedBy && !c.blockedBy && !c.cascadesUnknown;

/**
 * How many objects deleting `candidates` removes: each candidate that is deleted and everything it takes with it,
 * each object once (a ConfigMap in a Namespace that is deleted too counts once). What the count limit counts.
 */
export function deletionCount(candidates: PruneCandidate[]): number {
  const keys = new Set<string>();
  for (const c of candidates) if (willDelete(c)) for (const r of [c.ref, ...c.cascades]) keys.add(pruneKey(r));
  return keys.size;
}

export function planPrune(input: {
  controller: 'flux' | 'argocd';
  inventory: ObjectRef[];
  desired: ObjectRef[] | null;
  /** the candidates' live objects and everything their deletion takes with it (cascadeWalk) */
  live: Record<string, unknown>[];
  /** the namespaces and CRD kinds among those whose contents could not be listed in full */
  unknown?: CascadeUnknown;
  limits: PruneLimits;
}): PrunePlan {
  if (input.desired === null)
    return {
      state: 'unknown',
      reasons: ['the desired state is unknown (the render or the source fetch failed): nothing can be planned'],
      candidates: [],
    };
  const desired = new Set(input.desired.map(pruneKey));
  const seen = new Set<string>();
  const liveByKey = new Map<string, Obj>();
  for (const o of input.live) if (!liveByKey.has(liveKey(o))) liveByKey.set(liveKey(o), o);
  const lookups = lookupsOver(input.live, input.unknown);
  const candidates: PruneCandidate[] = [];
  for (const ref of input.inventory) {
    const k = pruneKey(ref);
    if (desired.has(k) || seen.has(k)) continue;
    seen.add(k);
    const live = liveByKey.get(k);
    const judged = live ? judgeCascade(live, lookups, ref.cluster) : undefined;
    candidates.push({
      ref,
      protectedBy: protectionOf(live),
      blockedBy: judged?.blockedBy ?? null,
      cascadesUnknown: judged?.unknown ?? null,
      cascades: judged?.cascades ?? [],
      finalizers: live ? [...(metaOf(live).finalizers ?? [])] : [],
    });
  }
  candidates.sort((a, b) => pruneKey(a.ref).localeCompare(pruneKey(b.ref)));
  const deleted = candidates.filter(willDelete);
  // not deleted because what they take with it is unknown: said, never "nothing else"
  const unknownReasons = candidates
    .filter((c) => !c.protectedBy && !c.blockedBy && c.cascadesUnknown)
    .map((c) => `${c.ref.kind} ${where(c.ref)} is not deleted: ${c.cascadesUnknown}`);
  if (deleted.length === 0)
    // nothing will be deleted: no candidates, or every candidate is protected or blocked (listed all the same)
    return unknownReasons.length
      ? { state: 'unknown', reasons: unknownReasons, candidates }
      : { state: 'nothing', reasons: [], candidates };
  const inventory = new Set(input.inventory.map(pruneKey)).size;
  const reasons: string[] = [];
  if (input.desired.length === 0 && input.inventory.length > 0)
    reasons.push(
      `the render is empty: all ${inventory} object${inventory === 1 ? '' : 's'} the app manages would be deleted (an empty directory, a failed generator or a wrong path look like this)`,
    );
  // the count limit counts what the deletions take with them (a Deployment's ReplicaSets and Pods, a
  // Namespace's contents), each object once; the fraction is of the app's own objects (its inventory)
  const total = deletionCount(candidates);
  if (total > input.limits.maxDeletions)
    reasons.push(
      total === deleted.length
        ? `${total} deletions exceed the limit of ${input.limits.maxDeletions}`
        : `${total} deletions (${deleted.length} object${deleted.length === 1 ? '' : 's'} and ${total - deleted.length} that their deletion takes with it) exceed the limit of ${input.limits.maxDeletions}`,
    );
  const fraction = inventory ? deleted.length / inventory : 0;
  if (fraction > input.limits.maxFraction)
    reasons.push(
      `${Math.round(fraction * 100)}% of the app's objects would be deleted, over the limit of ${Math.round(input.limits.maxFraction * 100)}%`,
    );
  const state = reasons.length ? 'needs-override' : 'ready';
  return { state, reasons: [...reasons, ...unknownReasons], candidates };
}
