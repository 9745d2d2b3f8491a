// Indexes over the informer caches for the resource tree: children by owner
// uid, objects tracked by a GitOps app (Flux labels / Argo CD tracking
// annotation), and which apps contain a given object (to push tree updates).
import { EventEmitter } from 'node:events';
import { splitApiVersion, type ObjectRef } from '../../domain/refs.ts';
import type { ClusterManager } from './cluster-manager.ts';
import type { InformerEvent, KubeObject, ResourceKind } from './informer.ts';

const k = (group: string, version: string, kind: string, plural: string, namespaced = true): ResourceKind => ({
  group,
  version,
  kind,
  plural,
  namespaced,
});

/** Kinds the tree reads live. Secrets are deliberately absent: the console never reads Secret data. */
export const TREE_KINDS: ResourceKind[] = [
  k('', 'v1', 'Namespace', 'namespaces', false),
  k('', 'v1', 'Pod', 'pods'),
  k('', 'v1', 'Service', 'services'),
  k('', 'v1', 'ConfigMap', 'configmaps'),
  k('', 'v1', 'ServiceAccount', 'serviceaccounts'),
  k('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims'),
  k('apps', 'v1', 'Deployment', 'deployments'),
  k('apps', 'v1', 'ReplicaSet', 'replicasets'),
  k('apps', 'v1', 'StatefulSet', 'statefulsets'),
  k('apps', 'v1', 'DaemonSet', 'daemonsets'),
  k('batch', 'v1', 'Job', 'jobs'),
  k('batch', 'v1', 'CronJob', 'cronjobs'),
  k('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers'),
  k('networking.k8s.io', 'v1', 'Ingress', 'ingresses'),
  k('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies'),
  k('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices'),
  // Argo Rollouts (a cluster without its CRDs: the informer finds the kind not served and looks again later)
  k('argoproj.io', 'v1alpha1', 'Rollout', 'rollouts'),
  k('argoproj.io', 'v1alpha1', 'AnalysisRun', 'analysisruns'),
  // Flagger: its Canaries own the `-primary` Deployment and the Services they generate
  k('flagger.app', 'v1beta1', 'Canary', 'canaries'),
  // External Secrets Operator: an ExternalSecret, its store (and readiness); the Secret it makes is never read
  k('external-secrets.io', 'v1', 'ExternalSecret', 'externalsecrets'),
  k('external-secrets.io', 'v1', 'SecretStore', 'secretstores'),
  k('external-secrets.io', 'v1', 'ClusterSecretStore', 'clustersecretstores', false),
];

export const FLUX_NAME_LABEL = 'kustomize.toolkit.fluxcd.io/name';
export const FLUX_NS_LABEL = 'kustomize.toolkit.fluxcd.io/namespace';
/** helm-controller's origin labels on every object of a release (its post-renderer) */
export const HELM_NAME_LABEL = 'helm.toolkit.fluxcd.io/name';
export const HELM_NS_LABEL = 'helm.toolkit.fluxcd.io/namespace';
export const ARGO_TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';
export const ARGO_INSTANCE_LABEL = 'app.kubernetes.io/instance';

const objKey = (kind: ResourceKind, o: KubeObject) =>
  `${kind.group}/${kind.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
export const refKey = (r: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>) =>
  `${r.group}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

interface ClusterIndex {
  byKey: Map<string, { kind: ResourceKind; obj: KubeObject }>;
  childrenByOwner: Map<string, Set<string>>;
  /** tracker id ("flux:ns/name", "helm:ns/name" or "argo:name") → object keys */
  tracked: Map<string, Set<string>>;
  /** bumped on every event: a view built from this cluster's objects at one generation is still current */
  generation: number;
}

/** `group`: the object's API group (helm-controller labels the HelmChart it makes too: a source, not a release object) */
export function trackersOf(o: KubeObject, group?: string): string[] {
  const md = (o.metadata ?? {}) as {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ controller?: boolean }>;
  };
  // an object with a controlling owner is a child (an EndpointSlice copies its Service's labels), not managed
  if (md.ownerReferences?.some((r) => r.controller === true)) return [];
  const out: string[] = [];
  const fn = md.labels?.[FLUX_NAME_LABEL];
  const fns = md.labels?.[FLUX_NS_LABEL];
  if (fn && fns) out.push(`flux:${fns}/${fn}`);
  const hn = md.labels?.[HELM_NAME_LABEL];
  const hns = md.labels?.[HELM_NS_LABEL];
  if (hn && hns && group !== 'source.toolkit.fluxcd.io') out.push(`helm:${hns}/${hn}`);
  const tid = md.annotations?.[ARGO_TRACKING_ANNOTATION];
  if (tid) out.push(`argo:${tid.split(':')[0]}`);
  return out;
}

export class ObjectIndex extends EventEmitter<{
  changed: [string, KubeObject];
  /** an object's version before and after (next undefined: deleted; prev undefined: first seen) */
  updated: [string, KubeObject | undefined, KubeObject | undefined];
}> {
  private readonly clusters = new Map<string, ClusterIndex>();

  constructor(private readonly cm: ClusterManager) {
    super();
    this.setMaxListeners(100);
    cm.on('object', (cluster, e) => this.onEvent(cluster, e));
  }

  start(): void {
    this.cm.watchEverywhere(TREE_KINDS);
  }

  private idx(cluster: string): ClusterIndex {
    let i = this.clusters.get(cluster);
    if (!i) {
      i = { byKey: new Map(), childrenByOwner: new Map(), tracked: new Map(), generation: 0 };
      this.clusters.set(cluster, i);
    }
    return i;
  }

  private onEvent(cluster: string, e: InformerEvent): void {
    const i = this.idx(cluster);
    const key = objKey(e.kind, e.obj);
    const prev = i.byKey.get(key)?.obj;
    i.generation++;
    if (prev) this.unlink(i, key, prev);
    if (e.type === 'delete') i.byKey.delete(key);
    else {
      i.byKey.set(key, { kind: e.kind, obj: e.obj });
      this.link(i, key, e.obj);
    }
    this.emit('changed', cluster, e.obj);
    this.emit('updated', cluster, prev, e.type === 'delete' ? undefined : e.obj);
  }

  private link(i: ClusterIndex, key: string, o: KubeObject): void {
    for (const ref of ownerRefs(o)) add(i.childrenByOwner, ref, key);
    for (const t of trackersOf(o, key.split('/')[0])) add(i.tracked, t, key);
  }

  private unlink(i: ClusterIndex, key: string, o: KubeObject): void {
    for (const ref of ownerRefs(o)) remove(i.childrenByOwner, ref, key);
    for (const t of trackersOf(o, key.split('/')[0])) remove(i.tracked, t, key);
  }

  get(cluster: string, r: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>): KubeObject | undefined {
    return this.clusters.get(cluster)?.byKey.get(refKey(r))?.obj;
  }

  /** changes with every object event on the cluster (a memo of a view built from it is current while equal) */
  generation(cluster: string): number {
    return this.clusters.get(cluster)?.generation ?? 0;
  }

  /** objects indexed per cluster (metrics: cache sizes) */
  sizes(): Map<string, number> {
    return new Map([...this.clusters].map(([c, i]) => [c, i.byKey.size]));
  }

  /** whether the console watches this kind at all (else a managed object of it cannot be judged) */
  watches(group: string, kind: string): boolean {
    return TREE_KINDS.some((t) => t.group === group && t.kind === kind);
  }

  /**
   * Whether this kind's first list on that cluster is done: before it, an object not in the index is not known to
   * be absent (unknown is never empty). True for a kind the console does not watch (nothing will come).
   */
  listed(cluster: string, group: string, kind: string): boolean {
    const c = this.cm.clusters.get(cluster);
    if (!c) return false;
    const inf = c.informers.get(`${group}/${kind}`);
    return inf ? inf.state.synced : !this.watches(group, kind);
  }

  childrenOf(cluster: string, uid: string): KubeObject[] {
    const i = this.clusters.get(cluster);
    const keys = i?.childrenByOwner.get(uid);
    if (!i || !keys) return [];
    return [...keys].map((key) => i.byKey.get(key)?.obj).filter((o): o is KubeObject => !!o);
  }

  trackedBy(cluster: string, tracker: string): KubeObject[] {
    const i = this.clusters.get(cluster);
    const keys = i?.tracked.get(tracker);
    if (!i || !keys) return [];
    return [...keys].map((key) => i.byKey.get(key)?.obj).filter((o): o is KubeObject => !!o);
  }

  /** the managed ancestor chain of an object (itself, its owner, its owner's owner…) as keys */
  ancestors(cluster: string, o: KubeObject, max = 6): KubeObject[] {
    const i = this.clusters.get(cluster);
    const out: KubeObject[] = [o];
    let cur: KubeObject | undefined = o;
    for (let d = 0; i && cur && d < max; d++) {
      type OwnerRef = { uid: string; kind: string; name: string; apiVersion: string };
      const refs: OwnerRef[] =
        (
          cur.metadata as
            { ownerReferences?: Array<{ uid: string; kind: string; name: string; apiVersion: string }> } | undefined
        )?.ownerReferences ?? [];
      const owner: OwnerRef | undefined = refs[0];
      if (!owner) break;
      const { group } = splitApiVersion(owner.apiVersion);
      const next: KubeObject | undefined = i.byKey.get(
        `${group}/${owner.kind}/${cur.metadata?.namespace ?? ''}/${owner.name}`,
      )?.obj;
      cur = next;
      if (cur) out.push(cur);
    }
    return out;
  }
}

function ownerRefs(o: KubeObject): string[] {
  const refs = (o.metadata as { ownerReferences?: Array<{ uid?: string }> } | undefined)?.ownerReferences;
  return Array.isArray(refs) ? refs.map((r) => r.uid).filter((u): u is string => typeof u === 'string') : [];
}
function add(m: Map<string, Set<string>>, k: string, v: string) {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}
function remove(m: Map<string, Set<string>>, k: string, v: string) {
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}
