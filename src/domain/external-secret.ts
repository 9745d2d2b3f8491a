// External Secrets Operator (issue 26, part 3): what an ExternalSecret makes and from where — the Secret it
// writes (which the console never reads), whether its last sync succeeded and when it refreshed, and the store it
// reads with that store's own readiness. Pure.
import { UNREAD_SECRET_REASON, type TreeNode } from './tree.ts';
import type { ObjectRef } from './refs.ts';
import { refId } from './refs.ts';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

export const ESO_GROUP = 'external-secrets.io';

const ready = (o: Obj) =>
  (Array.isArray(asObj(o.status).conditions) ? (asObj(o.status).conditions as Obj[]) : []).find(
    (c) => c.type === 'Ready',
  );

/** The store an ExternalSecret names (kind SecretStore in its namespace unless it says ClusterSecretStore). */
export function storeRefOf(es: Obj): { kind: 'SecretStore' | 'ClusterSecretStore'; name: string } | undefined {
  const ref = asObj(asObj(es.spec).secretStoreRef);
  const name = str(ref.name);
  if (!name) return undefined;
  return { kind: ref.kind === 'ClusterSecretStore' ? 'ClusterSecretStore' : 'SecretStore', name };
}

/** The Secret an ExternalSecret writes: status.binding, else spec.target.name, else its own name. */
export function targetSecretOf(es: Obj): string {
  const md = asObj(es.metadata);
  return str(asObj(asObj(es.status).binding).name) ?? str(asObj(asObj(es.spec).target).name) ?? String(md.name ?? '');
}

/** One line: "SecretSynced, refreshed 2026-…; from SecretStore platform-secrets (Ready)". */
export function externalSecretLine(es: Obj, store: Obj | 'unlisted' | undefined): string {
  const r = ready(es);
  const st = asObj(es.status);
  const ref = storeRefOf(es);
  const storeReady = store && store !== 'unlisted' ? ready(store) : undefined;
  const synced = r
    ? `${str(r.reason) ?? (r.status === 'True' ? 'Ready' : 'not Ready')}${r.status !== 'True' && str(r.message) ? `: ${String(r.message).slice(0, 300)}` : ''}`
    : 'not synced yet';
  const refreshed = str(st.refreshTime) ? `, refreshed ${String(st.refreshTime)}` : '';
  const from = ref
    ? `; from ${ref.kind} ${ref.name} (${
        store === 'unlisted'
          ? `not known yet: the console is still listing ${ref.kind}s`
          : !store
            ? 'not found'
            : storeReady?.status === 'True'
              ? 'Ready'
              : `not Ready${str(storeReady?.reason) ? `: ${String(storeReady?.reason)}` : ''}${
                  str(storeReady?.message) ? ` — ${String(storeReady?.message).slice(0, 300)}` : ''
                }`
      })`
    : '';
  return `${synced}${refreshed}${from}`;
}

/**
 * The tree's child of an ExternalSecret node: the Secret it writes, never read (unread, Unknown), its reason the
 * ExternalSecret's sync and store. Undefined when the tree already has that Secret (Git declares it too).
 */
export function externalSecretChild(
  parent: TreeNode,
  es: Obj,
  store: Obj | 'unlisted' | undefined,
  has: (id: string) => boolean,
): TreeNode | undefined {
  const ref: ObjectRef = {
    cluster: parent.ref.cluster,
    group: '',
    version: 'v1',
    kind: 'Secret',
    ...(parent.ref.namespace ? { namespace: parent.ref.namespace } : {}),
    name: targetSecretOf(es),
  };
  const id = refId(ref);
  if (has(id)) return undefined;
  return {
    id,
    ref,
    parentId: parent.id,
    depth: parent.depth + 1,
    childCount: 0,
    managed: false,
    health: 'Unknown',
    reason: `written by external-secrets: ${externalSecretLine(es, store)} · ${UNREAD_SECRET_REASON}`,
    unread: true,
  };
}
