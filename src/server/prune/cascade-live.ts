// What deleting a Namespace or a CustomResourceDefinition takes with it, read live with the console's own
// connection: a Namespace's contents across every namespaced kind the cluster serves (discovery: /api/v1 and the
// preferred version of each group under /apis), a CRD's custom resources across namespaces (its served version).
// Metadata only: every list asks for a PartialObjectMetadataList and nothing else is accepted, so a Secret is
// counted and its data never read. A kind the console cannot list (403, any error, a page that is not metadata)
// makes the reach unknown, said in one sentence ("cannot list secrets in ns x: the namespace's contents are
// unknown"), never "nothing else". Events are not listed: records of what happened, not state (they go with
// the namespace, and would only swell the count); nor are the metrics APIs' computed objects.
import type { Obj } from '../../domain/object-meta.ts';
import type { ClusterConnection } from '../kube/connection.ts';

/** The Accept header of a metadata-only list: the apiserver answers with names, labels, annotations, owners. */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
/** More objects than this in one namespace (or of one CRD) are not listed in full: the reach is unknown. */
export const MAX_LISTED = 5000;
const PAGE = 500;
const PARALLEL = 8;
const TIMEOUT_MS = 15_000;
/** annotations never kept from a list: kubectl's last-applied copy holds a Secret's data */
const DROPPED_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration'];
const SKIPPED = new Set(['/events', 'events.k8s.io/events']);
/** groups of computed, not stored, objects (a metrics server's): nothing there is deleted with a namespace */
const SKIPPED_GROUPS = new Set(['metrics.k8s.io', 'custom.metrics.k8s.io', 'external.metrics.k8s.io']);
const SAFE = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

export interface ListableKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

/** A reach listed live: the objects (metadata only) and, when it is not complete, the sentence why. */
export interface Listed {
  objects: Obj[];
  unknown: string | null;
}

const nameOf = (k: Pick<ListableKind, 'group' | 'plural'>) => (k.group ? `${k.group}/${k.plural}` : k.plural);
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

interface ApiResourceList {
  resources?: Array<{ name: string; kind: string; namespaced: boolean; verbs?: string[] }>;
}

/**
 * Every namespaced kind the cluster serves that can be listed (the preferred version of each group), and the
 * group versions whose discovery failed (their kinds are unknown).
 */
export async function namespacedKinds(conn: ClusterConnection): Promise<{ kinds: ListableKind[]; failed: string[] }> {
  const kinds: ListableKind[] = [];
  const failed: string[] = [];
  const add = (group: string, version: string, list: ApiResourceList) => {
    for (const r of list.resources ?? []) {
      if (r.name.includes('/') || !r.namespaced || !(r.verbs ?? []).includes('list')) continue;
      if (SKIPPED.has(`${group}/${r.name}`) || !SAFE.test(r.name)) continue;
      kinds.push({ group, version, kind: r.kind, plural: r.name });
    }
  };
  const core = await conn.json<ApiResourceList>('GET', '/api/v1', { timeoutMs: TIMEOUT_MS });
  add('', 'v1', core);
  const groups = await conn.json<{
    groups?: Array<{ name: string; preferredVersion?: { version?: string }; versions?: Array<{ version: string }> }>;
  }>('GET', '/apis', { timeoutMs: TIMEOUT_MS });
  const gvs = (groups.groups ?? [])
    .map((g) => ({ group: g.name, version: g.preferredVersion?.version ?? g.versions?.[0]?.version ?? '' }))
    .filter((g) => SAFE.test(g.group) && /^v[0-9a-z]+$/.test(g.version) && !SKIPPED_GROUPS.has(g.group));
  await inParallel(gvs, async ({ group, version }) => {
    try {
      add(
        group,
        version,
        await conn.json<ApiResourceList>('GET', `/apis/${group}/${version}`, { timeoutMs: TIMEOUT_MS }),
      );
    } catch {
      failed.push(`${group}/${version}`);
    }
  });
  kinds.sort((a, b) => a.group.localeCompare(b.group) || a.plural.localeCompare(b.plural));
  return { kinds, failed: failed.sort() };
}

/** Runs `fn` over `items`, at most PARALLEL at a time. */
async function inParallel<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
}

/** The metadata a list item keeps: no managedFields, no last-applied copy. */
function keptMetadata(md: unknown): Obj {
  const m = { ...((md ?? {}) as Obj) };
  delete m.managedFields;
  const ann = m.annotations as Record<string, string> | undefined;
  if (ann && DROPPED_ANNOTATIONS.some((a) => a in ann)) {
    const kept = { ...ann };
    for (const a of DROPPED_ANNOTATIONS) delete kept[a];
    m.annotations = kept;
  }
  return m;
}

/**
 * One kind listed metadata-only, page by page, at most `budget` objects; `error` says why it is not complete
 * ('' for 403: the console may not list it).
 */
async function listMetadata(
  conn: ClusterConnection,
  k: ListableKind,
  path: string,
  budget: number,
): Promise<{ objects: Obj[]; error?: string }> {
  const apiVersion = k.group ? `${k.group}/${k.version}` : k.version;
  const objects: Obj[] = [];
  let cont = '';
  do {
    const q = `?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    let status: number;
    let body: string;
    try {
      ({ status, body } = await conn.request('GET', path + q, {
        timeoutMs: TIMEOUT_MS,
        headers: { Accept: METADATA_LIST_ACCEPT },
      }));
    } catch (e) {
      return { objects, error: errText(e) };
    }
    if (status === 403) return { objects, error: '' };
    if (status !== 200) return { objects, error: `HTTP ${status}` };
    let list: { kind?: string; metadata?: { continue?: string }; items?: Array<{ metadata?: unknown }> };
    try {
      list = JSON.parse(body) as typeof list;
    } catch {
      return { objects, error: 'not JSON' };
    }
    // only metadata is ever kept: anything else (a server that ignores the Accept header) is not read
    if (list.kind !== 'PartialObjectMetadataList') return { objects, error: 'not served as metadata' };
    for (const it of list.items ?? []) objects.push({ apiVersion, kind: k.kind, metadata: keptMetadata(it.metadata) });
    if (objects.length > budget) return { objects, error: `more than ${budget} objects` };
    cont = list.metadata?.continue ?? '';
  } while (cont);
  return { objects };
}

/** Kubernetes' own kinds (core, `apps`, `*.k8s.io`…) before custom resources: what a reviewer knows first. */
const builtIn = (what: string) => {
  const group = what.includes('/') ? what.slice(0, what.indexOf('/')) : '';
  return !group.includes('.') || group.endsWith('.k8s.io');
};

/**
 * "secrets, rbac.authorization.k8s.io/rolebindings (HTTP 500)" — at most 20 named (failures with a reason first, then
 * Kubernetes' own kinds, then custom resources: what a reviewer needs first), then how many more.
 */
export function named(failures: Array<{ what: string; error: string }>): string {
  // failures with a reason (a group whose discovery failed, an HTTP error) first, then forbidden built-in kinds
  const rank = (f: { what: string; error: string }) => (f.error ? 0 : builtIn(f.what) ? 1 : 2);
  const ordered = [...failures].sort((a, b) => rank(a) - rank(b));
  const shown = ordered.slice(0, 20).map((f) => (f.error ? `${f.what} (${f.error})` : f.what));
  const more = failures.length - shown.length;
  return `${shown.join(', ')}${more > 0 ? ` and ${more} more kind${more === 1 ? '' : 's'}` : ''}`;
}

/**
 * A namespace's contents (metadata only) across `kinds`; unknown names every kind that could not be listed and
 * every group whose kinds could not be discovered (`failedGroups`).
 */
export async function namespaceContents(
  conn: ClusterConnection,
  namespace: string,
  kinds: ListableKind[],
  failedGroups: string[] = [],
): Promise<Listed> {
  if (!SAFE.test(namespace))
    return { objects: [], unknown: `ns ${namespace.slice(0, 80)} is not a namespace name: its contents are unknown` };
  const objects: Obj[] = [];
  const failures = failedGroups.map((gv) => ({ what: `the kinds of ${gv}`, error: 'discovery failed' }));
  // in the order of `kinds` (the core group first), whatever order the lists finish in
  const listed: Array<{ what: string; error?: string; objects: Obj[] }> = [];
  await inParallel(
    kinds.map((k, i) => ({ k, i })),
    async ({ k, i }) => {
      const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
      const r = await listMetadata(conn, k, `${base}/namespaces/${namespace}/${k.plural}`, MAX_LISTED);
      listed[i] = { what: nameOf(k), ...r };
    },
  );
  for (const l of listed) {
    objects.push(...l.objects);
    if (l.error !== undefined) failures.push({ what: l.what, error: l.error });
  }
  if (objects.length > MAX_LISTED && !failures.length)
    failures.push({ what: `more than ${MAX_LISTED} objects`, error: '' });
  return {
    objects,
    unknown: failures.length
      ? `cannot list ${named(failures)} in ns ${namespace}: the namespace's contents are unknown`
      : null,
  };
}

/** A CRD's custom resources across namespaces (metadata only), read in its storage version if served. */
export async function customResources(conn: ClusterConnection, crd: Obj): Promise<Listed> {
  const spec = (crd.spec ?? {}) as {
    group?: string;
    names?: { plural?: string; kind?: string };
    versions?: Array<{ name?: string; served?: boolean; storage?: boolean }>;
  };
  const group = spec.group ?? '';
  const plural = spec.names?.plural ?? '';
  const served = (spec.versions ?? []).filter((v) => v.served && v.name);
  const version = (served.find((v) => v.storage) ?? served[0])?.name ?? '';
  const what = `${group}/${plural}`;
  const unknown = (why: string) => `cannot list ${what}${why}: the CRD's custom resources are unknown`;
  if (!SAFE.test(group) || !SAFE.test(plural) || !/^v[0-9a-z]+$/.test(version))
    return { objects: [], unknown: unknown(' (the CRD serves no version of them)') };
  const k: ListableKind = { group, version, kind: spec.names?.kind ?? '', plural };
  const r = await listMetadata(conn, k, `/apis/${group}/${version}/${plural}`, MAX_LISTED);
  return { objects: r.objects, unknown: r.error === undefined ? null : unknown(r.error ? ` (${r.error})` : '') };
}
