/**
 * The console's approval of a prune the GitOps controller carries out, as the admission policy reads it
 * (deploy/prune-admission-policy.yaml): one ConfigMap per cluster whose `data` keys are the approved objects'
 * uids (each valued with the entry below, JSON) and the tenant namespaces whose ServiceAccounts the policy treats
 * as GitOps controllers (`ns.<namespace>`). Pure: what an entry says, when it is stale, which identities a cluster's GitOps
 * objects name, whether a namespace is governed, and whether an Argo CD app's pending deletions are exactly the
 * approved ones. The I/O is src/server/prune/approval-params.ts.
 */
import { metaOf, type Obj } from './object-meta.ts';
import { pruneKey } from './prune.ts';

export const APPROVALS_NAMESPACE = 'gitops-console-approvals';
export const APPROVALS_CONFIGMAP = 'gitops-console-prune-approvals';
/** The namespace label that puts a namespace (and a Namespace object itself) under the prune approval. */
export const GOVERNED_LABEL = 'gitops-console.dev/governed';
/** The namespaces whose every ServiceAccount the policy treats as a GitOps controller (its static prefixes). */
export const CONTROLLER_NAMESPACES = ['flux-system', 'argocd'] as const;

/** One approved object, as the console lists it under its uid. */
export interface ApprovalEntry {
  /** the prune preview that approved it */
  preview: string;
  /** the first 16 hex digits of the preview's snapshot hash */
  snapshot: string;
  /** the object's id (refs.ts refId) */
  object: string;
  /** where to read it again (its cluster is the ConfigMap's) */
  ref: { group: string; version: string; kind: string; namespace?: string; name: string };
  app: string;
  /** the revision the controller had applied when the entry was written (it survived a newer one: stale) */
  observed: string | null;
  /** when the approval lapses (ISO) */
  expires: string;
  /** when it was written (ISO) */
  at: string;
}

export const encodeEntry = (e: ApprovalEntry): string => JSON.stringify(e);

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** An entry read back; undefined when the value is not one the console wrote. */
export function decodeEntry(value: string): ApprovalEntry | undefined {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object') return undefined;
  const e = v as Partial<ApprovalEntry>;
  const r = e.ref;
  if (!str(e.preview) || !str(e.snapshot) || !str(e.object) || !str(e.app) || !str(e.expires) || !str(e.at))
    return undefined;
  if (!r || typeof r.group !== 'string' || !str(r.version) || !str(r.kind) || !str(r.name)) return undefined;
  if (r.namespace !== undefined && typeof r.namespace !== 'string') return undefined;
  if (e.observed !== null && typeof e.observed !== 'string') return undefined;
  if (Number.isNaN(Date.parse(e.expires))) return undefined;
  return e as ApprovalEntry;
}

/** The ConfigMap key of a ServiceAccount the policy is to treat as a GitOps controller. */
/** The data key of a tenant namespace: every ServiceAccount of it is a GitOps identity for the policy. */
export const tenantNamespaceKey = (namespace: string): string => `ns.${namespace}`;
/**
 * Whether a data key lists identities (else it is an approved object's uid): `ns.<namespace>`, or `sa.<ns>.<name>`
 * as consoles before issue 40 wrote them (removed by the next sync: the policy no longer reads them).
 */
export const isIdentityKey = (key: string): boolean => key.startsWith('ns.') || key.startsWith('sa.');
/** The namespace label a platform admin sets to list a tenant namespace before its first Flux object. */
export const TENANT_LABEL = 'gitops-console.dev/tenant';

/**
 * The cluster-scoped kinds whose deletion by a GitOps controller the policy holds in every cluster it is installed in
 * (deploy/prune-admission-policy.yaml gitops-console-prune-cluster, issue 40): a CRD takes its custom resources with
 * it, a PersistentVolume its data, RBAC and admission configuration who may do what. `group/kind`.
 */
export const GOVERNED_CLUSTER_KINDS: ReadonlySet<string> = new Set([
  'apiextensions.k8s.io/CustomResourceDefinition',
  '/PersistentVolume',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'apiregistration.k8s.io/APIService',
  'storage.k8s.io/StorageClass',
]);

/** Whether the policy holds a controller's deletion of this cluster-scoped kind wherever it is installed. */
export const isGovernedClusterKind = (group: string, kind: string): boolean =>
  GOVERNED_CLUSTER_KINDS.has(`${group}/${kind}`);

/** Whether a namespace (or a Namespace object) is governed: its label says so. */
export function isGoverned(ns: Obj | undefined): boolean {
  return !!ns && metaOf(ns).labels?.[GOVERNED_LABEL] === 'true';
}

/** Why an entry is to be withdrawn now; undefined: it stands. */
export function staleReason(
  e: ApprovalEntry,
  at: {
    now: number;
    /**
     * the preview it names; undefined when the store has none (another console's store, or one that lost it):
     * then the entry stands until it lapses, gone or not
     */
    preview: { status: string } | undefined;
    /** the object as it is live: undefined when it is gone */
    live: Obj | undefined;
    /** the uid the entry is listed under */
    uid: string;
    /** the revision the app's controller has applied now (undefined: not known) */
    revisionObserved: string | undefined;
  },
): string | undefined {
  if (Date.parse(e.expires) <= at.now) return `the approval lapsed at ${e.expires}`;
  if (at.preview && at.preview.status !== 'executing' && at.preview.status !== 'done')
    return `its preview is ${at.preview.status}`;
  if (!at.live) return 'the object is gone (pruned)';
  const m = metaOf(at.live);
  if (m.uid !== at.uid) return 'the object is gone (pruned); another one has its name now';
  if (m.deletionTimestamp) return 'the object is being deleted (pruned)';
  if (at.revisionObserved && e.observed !== null && at.revisionObserved !== e.observed)
    return `the object survived the controller's reconcile of ${at.revisionObserved}: it is back in the render`;
  return undefined;
}

/** `*` and `?` globs (Argo CD's destination patterns); a negated pattern (`!…`) matches nothing here. */
function globMatch(pattern: string, value: string): boolean {
  if (pattern.startsWith('!')) return false;
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(value);
}

/**
 * The tenant namespaces of a cluster, each with why: every ServiceAccount of a listed namespace is a GitOps
 * identity for the admission policy (key `ns.<namespace>`), a rule rather than a list of accounts (issue 40: a Git
 * change naming a new ServiceAccount was unheld until the console's next sweep, and while it was down). Listed:
 * - every governed namespace, and every namespace labelled `gitops-console.dev/tenant: "true"` (a platform
 *   admin's onboarding of a tenant before its first Kustomization);
 * - every namespace holding a Kustomization or HelmRelease that names a `spec.serviceAccountName`: Flux
 *   impersonates accounts of the object's own namespace only, so any account there may be named by the next commit
 *   (a namespace of sources or of objects that impersonate no one is not listed: an operator living there, e.g.
 *   External Secrets or Flagger, would otherwise become a "controller" whose owner references are refused);
 * - the namespace of each Argo CD sync impersonation account (AppProject `destinationServiceAccounts`, `ns:name`,
 *   or a name in the entry's plain destination namespace, or for a pattern in the destination namespace of each of
 *   the project's Applications it applies to: entries made before the policy refused patterns).
 * The controllers' own namespaces are left out (the policy matches them by prefix), and so is kube-system (its
 * accounts are Kubernetes' own controllers: never GitOps identities). The policy also treats every
 * account of the request's own (governed) namespace as a GitOps identity, without any listing, and refuses a
 * Kustomization, HelmRelease or AppProject that names an account of a namespace not listed here.
 */
export function controllerIdentities(input: {
  kustomizations: Obj[];
  helmReleases: Obj[];
  appProjects: Obj[];
  applications: Obj[];
  namespaces?: Obj[];
}): Map<string, string> {
  const out = new Map<string, string>();
  const add = (ns: string | undefined, why: string) => {
    if (!ns || ns === 'kube-system' || (CONTROLLER_NAMESPACES as readonly string[]).includes(ns)) return;
    const k = tenantNamespaceKey(ns);
    if (!out.has(k)) out.set(k, why);
  };
  for (const n of input.namespaces ?? []) {
    const m = metaOf(n);
    if (isGoverned(n)) add(m.name, 'a governed namespace');
    else if (m.labels?.[TENANT_LABEL] === 'true') add(m.name, `labelled ${TENANT_LABEL}`);
  }
  for (const [kind, list] of [
    ['Kustomization', input.kustomizations],
    ['HelmRelease', input.helmReleases],
  ] as const)
    for (const o of list) {
      const m = metaOf(o);
      const sa = (o.spec as { serviceAccountName?: unknown } | undefined)?.serviceAccountName;
      if (typeof sa === 'string' && sa)
        add(m.namespace, `${kind} ${m.namespace}/${m.name} spec.serviceAccountName ${sa}`);
    }
  type Dest = { server?: string; name?: string; namespace?: string; defaultServiceAccount?: string };
  for (const p of input.appProjects) {
    const project = metaOf(p).name ?? '';
    const entries = ((p.spec as { destinationServiceAccounts?: Dest[] } | undefined)?.destinationServiceAccounts ??
      []) as Dest[];
    for (const d of entries) {
      const sa = d.defaultServiceAccount;
      if (typeof sa !== 'string' || !sa) continue;
      const why = `AppProject ${project} destinationServiceAccounts ${sa}`;
      const i = sa.indexOf(':');
      if (i > 0) {
        add(sa.slice(0, i), why);
        continue;
      }
      if (d.namespace && isPlainName(d.namespace)) add(d.namespace, why);
      for (const a of input.applications) {
        const spec = a.spec as { project?: string; destination?: Dest } | undefined;
        if ((spec?.project ?? 'default') !== project) continue;
        const dest = spec?.destination ?? {};
        const server = dest.server ?? '';
        if (d.server && server && !globMatch(d.server, server)) continue;
        if (d.namespace && !globMatch(d.namespace, dest.namespace ?? '')) continue;
        add(dest.namespace, `${why} (Application ${metaOf(a).name ?? ''})`);
      }
    }
  }
  return out;
}

/** A namespace name, not an Argo CD pattern (`*`, `?`, `[…]`, `{…}`, a negation `!…`): the policy's same test. */
const isPlainName = (s: string): boolean => !/[*?![\]{}\\,]/.test(s);

/**
 * Whether an Argo CD Application's pending deletions (its `status.resources` marked `requiresPruning`) are exactly
 * `approved` (pruneKeys): `deletion-approved` approves every pending deletion of the app, so it is written only
 * then. Returns the two sets' differences when they are not.
 */
export function pendingDeletionsMatch(
  application: Obj,
  approved: string[],
): { ok: boolean; pending: string[]; notApproved: string[]; notPending: string[] } {
  type Res = { group?: string; kind?: string; namespace?: string; name?: string; requiresPruning?: boolean };
  const resources = ((application.status as { resources?: Res[] } | undefined)?.resources ?? []) as Res[];
  const pending = [
    ...new Set(
      resources
        .filter((r) => r.requiresPruning === true && r.kind && r.name)
        .map((r) => pruneKey({ group: r.group ?? '', kind: r.kind ?? '', namespace: r.namespace, name: r.name ?? '' })),
    ),
  ].sort();
  const want = new Set(approved);
  const have = new Set(pending);
  const notApproved = pending.filter((k) => !want.has(k));
  const notPending = [...want].filter((k) => !have.has(k)).sort();
  return { ok: !notApproved.length && !notPending.length, pending, notApproved, notPending };
}
