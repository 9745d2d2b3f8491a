/**
 * The console's approval of a prune the GitOps controller carries out, as the admission policy reads it
 * (deploy/prune-admission-policy.yaml): one ConfigMap per cluster whose `data` keys are the approved objects'
 * uids (each valued with the entry below, JSON) and the tenant identities the policy treats as GitOps controllers
 * (`sa.<namespace>.<name>`). Pure: what an entry says, when it is stale, which identities a cluster's GitOps
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
export const identityKey = (namespace: string, name: string): string => `sa.${namespace}.${name}`;
/** Whether a data key lists an identity (else it is an approved object's uid). */
export const isIdentityKey = (key: string): boolean => key.startsWith('sa.');

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
 * The ServiceAccounts a cluster's GitOps objects make the controllers act as, each with why: Flux Kustomizations'
 * and HelmReleases' `spec.serviceAccountName` (in the object's namespace), and Argo CD's sync impersonation
 * accounts (AppProject `spec.destinationServiceAccounts[].defaultServiceAccount`, `ns:name` or a name in the
 * destination namespace of each of the project's Applications it applies to). Accounts of the controllers' own
 * namespaces are left out: the policy matches those by prefix. Keys are the ConfigMap's (identityKey).
 */
export function controllerIdentities(input: {
  kustomizations: Obj[];
  helmReleases: Obj[];
  appProjects: Obj[];
  applications: Obj[];
}): Map<string, string> {
  const out = new Map<string, string>();
  const add = (ns: string | undefined, name: string | undefined, why: string) => {
    if (!ns || !name || (CONTROLLER_NAMESPACES as readonly string[]).includes(ns)) return;
    const k = identityKey(ns, name);
    if (!out.has(k)) out.set(k, why);
  };
  for (const [kind, list] of [
    ['Kustomization', input.kustomizations],
    ['HelmRelease', input.helmReleases],
  ] as const)
    for (const o of list) {
      const m = metaOf(o);
      const sa = (o.spec as { serviceAccountName?: unknown } | undefined)?.serviceAccountName;
      if (typeof sa === 'string' && sa)
        add(m.namespace, sa, `${kind} ${m.namespace}/${m.name} spec.serviceAccountName`);
    }
  type Dest = { server?: string; name?: string; namespace?: string; defaultServiceAccount?: string };
  for (const p of input.appProjects) {
    const project = metaOf(p).name ?? '';
    const entries = ((p.spec as { destinationServiceAccounts?: Dest[] } | undefined)?.destinationServiceAccounts ??
      []) as Dest[];
    for (const d of entries) {
      const sa = d.defaultServiceAccount;
      if (typeof sa !== 'string' || !sa) continue;
      const why = `AppProject ${project} destinationServiceAccounts`;
      const i = sa.indexOf(':');
      if (i > 0) {
        add(sa.slice(0, i), sa.slice(i + 1), why);
        continue;
      }
      for (const a of input.applications) {
        const spec = a.spec as { project?: string; destination?: Dest } | undefined;
        if ((spec?.project ?? 'default') !== project) continue;
        const dest = spec?.destination ?? {};
        const server = dest.server ?? '';
        if (d.server && server && !globMatch(d.server, server)) continue;
        if (d.namespace && !globMatch(d.namespace, dest.namespace ?? '')) continue;
        add(dest.namespace, sa, `${why} (Application ${metaOf(a).name ?? ''})`);
      }
    }
  }
  return out;
}

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
