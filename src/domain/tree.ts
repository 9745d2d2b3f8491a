/**
 * The per-app resource tree: app → managed objects → children by
 * ownerReferences. Pure: the caller supplies lookups over its caches.
 * Output is a flat list in depth-first order (what a virtualized list needs),
 * each node knowing its depth, parent and children.
 */
import { worseHealth, type HealthStatus } from './app.ts';
import type { HookRun } from './argo-hooks.ts';
import { assessHealth } from './health.ts';
import { metaOf, newestManagedEntry, type Obj } from './object-meta.ts';
import type { ObjectRef } from './refs.ts';
import { refId, splitApiVersion } from './refs.ts';

export const NODE_SYNC = ['Synced', 'OutOfSync', 'Missing', 'Extraneous', 'Unknown'] as const;
export type NodeSync = (typeof NODE_SYNC)[number];

export interface TreeNode {
  id: string;
  ref: ObjectRef;
  uid?: string;
  parentId?: string;
  depth: number;
  childCount: number;
  /** managed objects are tracked by the app; children are owned by them */
  managed: boolean;
  health: HealthStatus;
  sync?: NodeSync;
  reason: string;
  createdAt?: string;
  /** the newest managedFields entry: who wrote the object last, and when */
  lastManager?: { manager: string; operation: string; time?: string; subresource?: string };
  /** a kind the console never reads (Secrets): its live state is unknown, and it does not count in the app's health */
  unread?: true;
  /**
   * an Argo CD hook (domain/argo-hooks.ts): Argo CD compares none, so it has no `sync` and does not count in the
   * sync summary; its last run instead (a live hook's health is its object's, as before)
   */
  hook?: HookRun;
}

/** Secrets are never read (deploy/rbac.yaml grants no get/list/watch on them): their live state is unknown. */
export const UNREAD_SECRET_REASON = 'not read: the console never reads Secrets, so whether it is live is unknown here';
export function isUnreadKind(ref: Pick<ObjectRef, 'group' | 'kind'>): boolean {
  return ref.kind === 'Secret' && (ref.group ?? '') === '';
}

export interface TreeSummary {
  health: HealthStatus;
  reason: string;
  counts: Record<HealthStatus, number>;
  sync: Record<NodeSync, number>;
  total: number;
}

export interface TreeSources {
  /** the live object for a ref, if it exists */
  get(ref: ObjectRef): Obj | undefined;
  /** live objects whose ownerReferences name this uid */
  childrenOf(uid: string): Obj[];
  /** live objects that carry the app's tracking label/annotation but are not in its inventory */
  extraneous(): Obj[];
  /** an Argo CD app's hook (domain/argo-hooks.ts argoHookOf), by its ref and live object; absent: no hooks (Flux) */
  hookOf?(ref: ObjectRef, live: Obj | undefined): HookRun | undefined;
}

export function lastManager(o: Obj): TreeNode['lastManager'] {
  const best = newestManagedEntry(o);
  return best?.manager
    ? {
        manager: best.manager,
        operation: String(best.operation ?? ''),
        ...(best.time ? { time: best.time } : {}),
        ...(best.subresource ? { subresource: best.subresource } : {}),
      }
    : undefined;
}

export function refOf(cluster: string, o: Obj): ObjectRef {
  const { group, version } = splitApiVersion(String(o.apiVersion ?? 'v1'));
  const m = metaOf(o);
  return {
    cluster,
    group,
    version,
    kind: String(o.kind ?? '?'),
    ...(m.namespace ? { namespace: m.namespace } : {}),
    name: m.name ?? '?',
  };
}

const KIND_ORDER = [
  'Namespace',
  'CustomResourceDefinition',
  'ServiceAccount',
  'ConfigMap',
  'Secret',
  'PersistentVolumeClaim',
  'Service',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'Pod',
  'HorizontalPodAutoscaler',
  'Ingress',
  'EndpointSlice',
];
const kindRank = (k: string) => {
  const i = KIND_ORDER.indexOf(k);
  return i < 0 ? KIND_ORDER.length : i;
};
/** The tree's stable order of siblings (kind rank, kind, namespace, name); tree-window.ts pages a set by it. */
export const compareRefs = (
  a: Pick<ObjectRef, 'kind' | 'namespace' | 'name'>,
  b: Pick<ObjectRef, 'kind' | 'namespace' | 'name'>,
) =>
  kindRank(a.kind) - kindRank(b.kind) ||
  a.kind.localeCompare(b.kind) ||
  (a.namespace ?? '').localeCompare(b.namespace ?? '') ||
  a.name.localeCompare(b.name);

/**
 * A row's sync, the one function for it (issue 39): a managed object that is live is Synced only while nobody else
 * holds a field Git declares; with an open drift episode (a hand edit, another manager) it is OutOfSync, whatever
 * the controller last reported. Missing, Extraneous and Unknown stay as they are.
 */
export function nodeSync(sync: NodeSync | undefined, drifted: boolean): NodeSync | undefined {
  return drifted && sync === 'Synced' ? 'OutOfSync' : sync;
}

/** Builds the tree in depth-first order. Children are never followed twice (ownership cycles cannot loop). */
export function buildTree(
  cluster: string,
  inventory: ObjectRef[],
  src: TreeSources,
  maxDepth = 6,
): { nodes: TreeNode[]; summary: TreeSummary } {
  const nodes: TreeNode[] = [];
  const seen = new Set<string>();
  const visit = (
    o: Obj,
    parentId: string | undefined,
    depth: number,
    managed: boolean,
    sync: NodeSync | undefined,
    knownRef?: ObjectRef,
  ) => {
    const ref = knownRef ?? refOf(cluster, o);
    const id = refId(ref);
    if (seen.has(id)) return;
    seen.add(id);
    const m = metaOf(o);
    const h = assessHealth(o);
    // a hook of the app (not its children: a hook Job's Pods are only owned) has its last run, never a sync verdict
    const hook = managed ? src.hookOf?.(ref, o) : undefined;
    if (hook) sync = undefined;
    const node: TreeNode = {
      id,
      ref,
      ...(m.uid ? { uid: m.uid } : {}),
      ...(parentId ? { parentId } : {}),
      depth,
      childCount: 0,
      managed,
      health: h.status,
      ...(sync ? { sync } : {}),
      reason: h.message,
      ...(m.creationTimestamp ? { createdAt: m.creationTimestamp } : {}),
      ...(hook ? { hook } : {}),
    };
    const lm = lastManager(o);
    if (lm) node.lastManager = lm;
    nodes.push(node);
    if (!m.uid || depth >= maxDepth) return;
    // refs computed once per child, then sorted (kind order, namespace, name)
    const kids = src
      .childrenOf(m.uid)
      .map((k) => ({ k, r: refOf(cluster, k) }))
      .sort((a, b) => compareRefs(a.r, b.r));
    for (const { k, r } of kids) {
      const before = nodes.length;
      visit(k, id, depth + 1, false, undefined, r);
      if (nodes.length > before) node.childCount++;
    }
  };
  for (const ref of [...inventory].sort(compareRefs)) {
    const live = src.get(ref);
    if (live) visit(live, undefined, 0, true, 'Synced');
    else {
      const id = refId(ref);
      if (seen.has(id)) continue;
      seen.add(id);
      const hook = src.hookOf?.(ref, undefined);
      if (hook) {
        // Argo CD creates a hook when its phase runs and deletes it by its delete policy: not live is no "Missing"
        nodes.push({
          id,
          ref,
          depth: 0,
          childCount: 0,
          managed: true,
          health: 'Missing',
          reason: 'not live: a hook exists while its sync phase runs, until its delete policy removes it',
          hook,
        });
        continue;
      }
      nodes.push(
        isUnreadKind(ref)
          ? {
              id,
              ref,
              depth: 0,
              childCount: 0,
              managed: true,
              health: 'Unknown',
              sync: 'Unknown',
              reason: UNREAD_SECRET_REASON,
              unread: true,
            }
          : {
              id,
              ref,
              depth: 0,
              childCount: 0,
              managed: true,
              health: 'Missing',
              sync: 'Missing',
              reason: 'in the desired state but not found in the cluster',
            },
      );
    }
  }
  for (const o of src.extraneous()) {
    // a hook no longer in the app's list is still a hook (Argo CD never prunes one): visit gives it no sync
    visit(o, undefined, 0, true, 'Extraneous');
    const n = nodes.find((x) => x.id === refId(refOf(cluster, o)));
    if (n && n.sync === 'Extraneous')
      n.reason = `live and tracked by the app, but no longer in Git${n.reason ? ` · ${n.reason}` : ''}`;
  }
  return { nodes, summary: summarize(nodes) };
}

/**
 * App-level summary. App health is the worst of its *managed* objects (what Git declares), with the
 * reason of the worst one; a worse descendant (a crashing Pod under a Deployment) is named too.
 */
export function summarize(nodes: TreeNode[]): TreeSummary {
  const counts: Record<HealthStatus, number> = {
    Healthy: 0,
    Progressing: 0,
    Degraded: 0,
    Suspended: 0,
    Missing: 0,
    Unknown: 0,
  };
  const sync: Record<NodeSync, number> = { Synced: 0, OutOfSync: 0, Missing: 0, Extraneous: 0, Unknown: 0 };
  let health: HealthStatus = 'Healthy';
  let worst: TreeNode | undefined;
  let worstChild: TreeNode | undefined;
  const label = (n: TreeNode) =>
    `${n.ref.kind} ${n.ref.namespace ? `${n.ref.namespace}/` : ''}${n.ref.name}: ${n.reason}`;
  for (const n of nodes) {
    counts[n.health]++;
    // a hook has no sync (Argo CD compares none): it is in no sync count
    if (n.sync) sync[n.sync]++;
    // an object the console never reads has no health to give (as Argo CD leaves kinds without a health check out);
    // nor has a hook that is not live (deleted by its delete policy: its last run says how it went)
    if (n.unread || (n.hook && !n.uid)) continue;
    if (n.managed) {
      const w = worseHealth(health, n.health);
      if (w !== health || (!worst && n.health !== 'Healthy')) {
        health = w;
        worst = n;
      }
    } else if (
      n.health !== 'Healthy' &&
      (!worstChild || worseHealth(worstChild.health, n.health) !== worstChild.health)
    ) {
      worstChild = n;
    }
  }
  let reason = worst && health !== 'Healthy' ? label(worst) : '';
  if (worstChild && worseHealth(health, worstChild.health) !== health)
    reason = `${reason ? `${reason} · ` : ''}${label(worstChild)}`;
  return { health, reason, counts, sync, total: nodes.length };
}
