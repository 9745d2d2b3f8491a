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
 * The console's approval on an object a controller will prune: `<preview id>/<snapshot hash prefix>`. The
 * admission policy (deploy/prune-admission-policy.yaml) lets the GitOps controllers delete only objects that
 * carry it in governed namespaces.
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
  /** the custom resources of a group and kind (deleting their CustomResourceDefinition deletes them) */
  ofKind?(group: string, kind: string): Obj[];
}

/**
 * What deleting `roots` takes with it, as live objects in the order reached: ownerReferences children
 * (recursively), a Namespace's contents, a CRD's custom resources. The one cascade walk: the plan lists its
 * result per candidate, the prune service gathers with it the live objects the plan needs. Each object once (by
 * pruneKey); an object whose key is in `exclude` is neither listed nor walked further; a root is listed only when
 * another root reaches it.
 */
export function cascadeWalk(roots: Obj[], lookups: CascadeLookups, exclude: ReadonlySet<string> = new Set()): Obj[] {
  const out = new Map<string, Obj>();
  const queue: Obj[] = [...roots];
  const add = (o: Obj) => {
    const k = pruneKey(refOfLive('', o));
    if (exclude.has(k) || out.has(k)) return;
    out.set(k, o);
    queue.push(o);
  };
  for (let i = 0; i < queue.length; i++) {
    const o = queue[i] as Obj;
    const r = refOfLive('', o);
    const uid = metaOf(o).uid;
    if (uid) for (const c of lookups.childrenOf(uid)) add(c);
    if (r.group === '' && r.kind === 'Namespace' && lookups.inNamespace)
      for (const c of lookups.inNamespace(r.name)) add(c);
    if (r.group === 'apiextensions.k8s.io' && r.kind === 'CustomResourceDefinition' && lookups.ofKind) {
      const spec = (o.spec ?? {}) as { group?: string; names?: { kind?: string } };
      if (spec.group && spec.names?.kind) for (const c of lookups.ofKind(spec.group, spec.names.kind)) add(c);
    }
  }
  return [...out.values()];
}

export function planPrune(input: {
  controller: 'flux' | 'argocd';
  inventory: ObjectRef[];
  desired: ObjectRef[] | null;
  live: Record<string, unknown>[];
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
  const cluster = input.inventory[0]?.cluster ?? '';
  // live objects by key, children by owner uid, namespaced objects by namespace, custom resources by group/kind
  const liveByKey = new Map<string, Obj>();
  const childrenOf = new Map<string, Obj[]>();
  const inNamespace = new Map<string, Obj[]>();
  const byGroupKind = new Map<string, Obj[]>();
  const push = (m: Map<string, Obj[]>, k: string, o: Obj) => {
    const l = m.get(k);
    if (l) l.push(o);
    else m.set(k, [o]);
  };
  for (const o of input.live) {
    const r = refOfLive(cluster, o);
    liveByKey.set(pruneKey(r), o);
    const m = metaOf(o);
    for (const ow of m.ownerReferences ?? []) if (ow.uid) push(childrenOf, ow.uid, o);
    if (m.namespace) push(inNamespace, m.namespace, o);
    push(byGroupKind, `${r.group}/${r.kind}`, o);
  }
  const lookups: CascadeLookups = {
    childrenOf: (uid) => childrenOf.get(uid) ?? [],
    inNamespace: (ns) => inNamespace.get(ns) ?? [],
    ofKind: (group, kind) => byGroupKind.get(`${group}/${kind}`) ?? [],
  };
  const cascadesOf = (root: Obj, ref: ObjectRef): ObjectRef[] =>
    cascadeWalk([root], lookups, new Set([pruneKey(ref)]))
      .map((o) => refOfLive(ref.cluster, o))
      .sort((a, b) => pruneKey(a).localeCompare(pruneKey(b)));
  const candidates: PruneCandidate[] = [];
  for (const ref of input.inventory) {
    const k = pruneKey(ref);
    if (desired.has(k) || seen.has(k)) continue;
    seen.add(k);
    const live = liveByKey.get(k);
    candidates.push({
      ref,
      protectedBy: protectionOf(live),
      cascades: live ? cascadesOf(live, ref) : [],
      finalizers: live ? [...(metaOf(live).finalizers ?? [])] : [],
    });
  }
  candidates.sort((a, b) => pruneKey(a.ref).localeCompare(pruneKey(b.ref)));
  const deletions = candidates.filter((c) => !c.protectedBy).length;
  // nothing will be deleted: no candidates, or every candidate is protected (listed all the same)
  if (deletions === 0) return { state: 'nothing', reasons: [], candidates };
  const inventory = new Set(input.inventory.map(pruneKey)).size;
  const reasons: string[] = [];
  if (input.desired.length === 0 && input.inventory.length > 0)
    reasons.push(
      `the render is empty: all ${inventory} object${inventory === 1 ? '' : 's'} the app manages would be deleted (an empty directory, a failed generator or a wrong path look like this)`,
    );
  if (deletions > input.limits.maxDeletions)
    reasons.push(`${deletions} deletions exceed the limit of ${input.limits.maxDeletions}`);
  const fraction = inventory ? deletions / inventory : 0;
  if (fraction > input.limits.maxFraction)
    reasons.push(
      `${Math.round(fraction * 100)}% of the app's objects would be deleted, over the limit of ${Math.round(input.limits.maxFraction * 100)}%`,
    );
  return { state: reasons.length ? 'needs-override' : 'ready', reasons, candidates };
}
