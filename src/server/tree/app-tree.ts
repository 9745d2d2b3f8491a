// Builds an app's resource tree from the informer caches.
import { ESO_GROUP, externalSecretChild, storeRefOf } from '../../domain/external-secret.ts';
import type { App } from '../../domain/app.ts';
import { argoHookOf, hookKey, listedHooksOf } from '../../domain/argo-hooks.ts';
import { argoSyncOperationOf } from '../../domain/argo-sync.ts';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import { buildTree, refOf, type TreeNode, type TreeSources, type TreeSummary } from '../../domain/tree.ts';
import type { KubeObject } from '../kube/informer.ts';
import { refKey, type ObjectIndex } from '../kube/object-index.ts';

export function trackerOf(app: App): string {
  if (app.controller !== 'flux') return `argo:${app.name}`;
  return app.kind === 'HelmRelease' ? `helm:${app.namespace}/${app.name}` : `flux:${app.namespace}/${app.name}`;
}

/**
 * An Argo CD app's hooks (domain/argo-hooks.ts), from its Application (`application`, the raw object): those it lists
 * with `hook: true`, those its last sync operation ran, and any object annotated as one. Flux has no hooks: a Job
 * annotated `argocd.argoproj.io/hook` under a Kustomization is an ordinary object (no `hookOf`).
 */
function hooksOf(app: App, application: Record<string, unknown> | undefined): TreeSources['hookOf'] {
  if (app.controller !== 'argocd' || !application) return undefined;
  const op = argoSyncOperationOf(application);
  const listed = listedHooksOf(application);
  return (ref, live) => argoHookOf(ref, live ? { live } : {}, op, listed.has(hookKey(ref)));
}

export function appTree(
  app: App,
  index: ObjectIndex,
  application?: Record<string, unknown>,
): { nodes: TreeNode[]; summary: TreeSummary } {
  const inInventory = new Set(app.inventory.map((r) => refKey(r)));
  const hookOf = hooksOf(app, application);
  const { nodes, summary } = buildTree(app.cluster, app.inventory, {
    ...(hookOf ? { hookOf } : {}),
    get: (ref: ObjectRef) => index.get(app.cluster, ref),
    childrenOf: (uid) => index.childrenOf(app.cluster, uid),
    extraneous: () =>
      index.trackedBy(app.cluster, trackerOf(app)).filter((o) => !inInventory.has(refKey(refOf(app.cluster, o)))),
  });
  // managed objects of kinds the console does not read (e.g. Secrets) are not "missing": say why
  // nor are those of a kind whose first list has not finished yet (unknown is never empty)
  for (const n of nodes) {
    if (n.sync !== 'Missing') continue;
    if (!index.watches(n.ref.group, n.ref.kind)) {
      n.health = 'Unknown';
      n.sync = 'Unknown';
      n.reason =
        n.ref.kind === 'Secret' ? 'Secrets are not read by the console' : `the console does not watch ${n.ref.kind}`;
    } else if (!index.listed(app.cluster, n.ref.group, n.ref.kind)) {
      n.health = 'Unknown';
      n.sync = 'Unknown';
      n.reason = `not known yet: the console is still listing ${n.ref.kind} objects on ${app.cluster}`;
    }
  }
  return { nodes: withExternalSecretChildren(app.cluster, nodes, index), summary: recount(nodes, summary) };
}

/**
 * The app's tree, built once per change of its cluster's objects (issue 27: a window onto a 100,000-object tree
 * asks again for each page, expand and filter). At most a few apps are kept, each for at most 2 s after it was
 * built: whether a kind is listed yet can change without an object event.
 */
export class AppTreeMemo {
  private readonly entries = new Map<
    string,
    {
      app: App;
      application: Record<string, unknown> | undefined;
      generation: number;
      at: number;
      tree: ReturnType<typeof appTree>;
    }
  >();
  constructor(
    private readonly index: ObjectIndex,
    private readonly max = 4,
    private readonly ttlMs = 2000,
    private readonly now = () => Date.now(),
  ) {}

  /** `application`: the app's own object (an Argo CD Application's operation state names its hooks' runs) */
  tree(app: App, application?: Record<string, unknown>): { nodes: TreeNode[]; summary: TreeSummary } {
    const generation = this.index.generation(app.cluster);
    const hit = this.entries.get(app.id);
    if (
      hit &&
      hit.app === app &&
      hit.application === application &&
      hit.generation === generation &&
      this.now() - hit.at < this.ttlMs
    )
      return hit.tree;
    const tree = appTree(app, this.index, application);
    this.entries.delete(app.id);
    this.entries.set(app.id, { app, application, generation, at: this.now(), tree });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    return tree;
  }
}

/** Each ExternalSecret's Secret as its child (domain/external-secret.ts): the Secret is never read, only named. */
function withExternalSecretChildren(cluster: string, nodes: TreeNode[], index: ObjectIndex): TreeNode[] {
  if (!nodes.some((n) => n.ref.kind === 'ExternalSecret' && n.ref.group === ESO_GROUP)) return nodes;
  const ids = new Set(nodes.map((n) => n.id));
  const out: TreeNode[] = [];
  for (const n of nodes) {
    out.push(n);
    if (n.ref.kind !== 'ExternalSecret' || n.ref.group !== ESO_GROUP) continue;
    const es = index.get(cluster, n.ref) as Record<string, unknown> | undefined;
    if (!es) continue;
    const s = storeRefOf(es);
    const store = s
      ? index.get(cluster, {
          group: ESO_GROUP,
          kind: s.kind,
          ...(s.kind === 'SecretStore' && n.ref.namespace ? { namespace: n.ref.namespace } : {}),
          name: s.name,
        })
      : undefined;
    const known = !s || !!store || index.listed(cluster, ESO_GROUP, s.kind);
    const child = externalSecretChild(
      n,
      es,
      known ? (store as Record<string, unknown> | undefined) : 'unlisted',
      (id) => ids.has(id),
    );
    if (!child) continue;
    ids.add(child.id);
    n.childCount++;
    out.push(child);
  }
  return out;
}

function recount(nodes: TreeNode[], s: TreeSummary): TreeSummary {
  const counts = { ...s.counts, Missing: 0, Unknown: 0 };
  const sync = { ...s.sync, Missing: 0, Unknown: 0 };
  for (const n of nodes) {
    if (n.health === 'Missing') counts.Missing++;
    if (n.health === 'Unknown') counts.Unknown++;
    if (n.sync === 'Missing') sync.Missing++;
    if (n.sync === 'Unknown') sync.Unknown++;
  }
  return { ...s, counts, sync };
}

/** ids of apps whose inventory (or tracking) covers this object or one of its owners */
export function appsTouching(apps: App[], cluster: string, chain: KubeObject[]): string[] {
  const keys = new Set(chain.map((o) => refId(refOf(cluster, o))));
  return apps.filter((a) => a.cluster === cluster && a.inventory.some((r) => keys.has(refId(r)))).map((a) => a.id);
}
