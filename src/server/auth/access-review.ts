// Impersonation mode: Kubernetes RBAC of the signed-in user decides what the
// console shows. Reads served from the console's cache are filtered with
// SubjectAccessReviews (asked with the console's own identity, which needs
// `create subjectaccessreviews`); requests the console sends on the user's
// behalf carry Impersonate-User / Impersonate-Group headers. Nothing per-user
// is cached but yes/no answers, keyed by user+groups, for a few seconds —
// never a credential, never shared between users.
import type { FastifyRequest } from 'fastify';
import type { App } from '../../domain/app.ts';
import type { TreeNode } from '../../domain/tree.ts';
import type { Principal } from './sessions.ts';
import type { ClusterManager } from '../kube/cluster-manager.ts';
import { Discovery } from '../kube/discovery.ts';
import { KINDS } from '../kube/kinds.ts';
import { isReservedName } from './oidc.ts';

export interface ReviewTarget {
  cluster: string;
  verb: string;
  group: string;
  version: string;
  kind: string;
  namespace?: string | undefined;
}

/** An object as the per-object access check sees it: its cluster, its kind's group and version, its namespace. */
export interface AccessRef {
  cluster: string;
  group: string;
  version: string;
  kind: string;
  namespace?: string | undefined;
}

/** A list split by what one user may `get`: what they see, what they may not, and one sentence saying so. */
export interface AccessSplit<T> {
  visible: T[];
  hidden: T[];
  /** "2 objects hidden: your Kubernetes RBAC does not allow get on configmaps in dev"; null when nothing is hidden */
  message: string | null;
}

const objects = (n: number) => `${n} object${n === 1 ? '' : 's'}`;

/** Never impersonate a `system:` identity (system:masters is cluster-admin), whatever the IdP says. */
function safeGroups(user: Principal): string[] {
  return user.groups.filter((g) => !isReservedName(g));
}
function safeUser(user: Principal): string {
  if (isReservedName(user.name)) throw new Error(`refusing to impersonate the reserved user name ${user.name}`);
  return user.name;
}

export class AccessReviewer {
  private readonly answers = new Map<string, { allowed: boolean; until: number }>();
  private readonly discoveries = new Map<string, Discovery>();
  reviews = 0;

  constructor(
    private readonly clusters: ClusterManager,
    private readonly ttlMs = 10_000,
  ) {}

  /** Headers for a request sent on the user's behalf. */
  static headers(user: Principal): Record<string, string | string[]> {
    const groups = safeGroups(user);
    return {
      'Impersonate-User': safeUser(user),
      ...(groups.length ? { 'Impersonate-Group': groups } : {}),
    };
  }

  private async plural(cluster: string, group: string, version: string, kind: string): Promise<string | undefined> {
    const known = Object.values(KINDS).find((k) => k.group === group && k.kind === kind);
    if (known) return known.plural;
    const mc = this.clusters.clusters.get(cluster);
    if (!mc) return undefined;
    let d = this.discoveries.get(cluster);
    if (!d) this.discoveries.set(cluster, (d = new Discovery(mc.conn)));
    return (await d.resolve(group ? `${group}/${version}` : version, kind).catch(() => undefined))?.plural;
  }

  async allowed(user: Principal, t: ReviewTarget): Promise<boolean> {
    const key = JSON.stringify([user.name, [...user.groups].sort(), t.cluster, t.verb, t.group, t.kind, t.namespace]);
    const hit = this.answers.get(key);
    if (hit && hit.until > Date.now()) return hit.allowed;
    const mc = this.clusters.clusters.get(t.cluster);
    const resource = await this.plural(t.cluster, t.group, t.version, t.kind);
    let ok = false;
    if (mc && resource) {
      this.reviews++;
      const r = await mc.conn.json<{ status?: { allowed?: boolean } }>(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          body: JSON.stringify({
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: safeUser(user),
              groups: [...safeGroups(user), 'system:authenticated'],
              resourceAttributes: {
                verb: t.verb,
                group: t.group,
                resource,
                ...(t.namespace ? { namespace: t.namespace } : {}),
              },
            },
          }),
          contentType: 'application/json',
          timeoutMs: 10_000,
        },
      );
      ok = r.status?.allowed === true;
    }
    if (this.answers.size > 50_000) this.answers.clear();
    this.answers.set(key, { allowed: ok, until: Date.now() + this.ttlMs });
    return ok;
  }

  /**
   * Whether `user` may `get` objects of this kind in this namespace: the per-object check of what the console
   * serves from reads it made as itself (the diff's, a freeze's live changes, a prune preview). A review that
   * fails is a no (`unchecked`), never allowed; so is a kind discovery does not know (`denied`, as in `allowed`).
   * The diff's own check (`allowed(…).catch(() => false)`) is `(await mayGet(…)) === 'allowed'`.
   */
  async mayGet(user: Principal, ref: AccessRef): Promise<'allowed' | 'denied' | 'unchecked'> {
    try {
      const ok = await this.allowed(user, {
        cluster: ref.cluster,
        verb: 'get',
        group: ref.group,
        version: ref.version,
        kind: ref.kind,
        namespace: ref.namespace,
      });
      return ok ? 'allowed' : 'denied';
    } catch {
      return 'unchecked';
    }
  }

  /**
   * `items` split by whether `user` may get each one's object (one review per kind and namespace). With no reviewer
   * (service mode) everything is visible; with a reviewer but no user, nothing is. What is hidden is counted by
   * resource and namespace in `message`, never dropped silently.
   */
  static async split<T>(
    reviewer: AccessReviewer | undefined,
    user: Principal | undefined,
    items: readonly T[],
    refOf: (item: T) => AccessRef,
  ): Promise<AccessSplit<T>> {
    if (!reviewer) return { visible: [...items], hidden: [], message: null };
    const answers = new Map<string, Promise<{ answer: 'allowed' | 'denied' | 'unchecked'; resource: string }>>();
    const visible: T[] = [];
    const hidden: T[] = [];
    const why = new Map<string, { answer: 'denied' | 'unchecked'; where: string; count: number }>();
    for (const item of items) {
      const r = refOf(item);
      const key = JSON.stringify([r.cluster, r.group, r.version, r.kind, r.namespace ?? null]);
      let p = answers.get(key);
      if (!p)
        answers.set(
          key,
          (p = (async () => ({
            answer: user ? await reviewer.mayGet(user, r) : ('denied' as const),
            resource: (await reviewer.plural(r.cluster, r.group, r.version, r.kind).catch(() => undefined)) ?? r.kind,
          }))()),
        );
      const { answer, resource } = await p;
      if (answer === 'allowed') {
        visible.push(item);
        continue;
      }
      hidden.push(item);
      const where = `${r.group ? `${resource}.${r.group}` : resource} ${r.namespace ? `in ${r.namespace}` : 'at cluster scope'}`;
      const w = why.get(`${answer}\n${where}`) ?? { answer, where, count: 0 };
      w.count++;
      why.set(`${answer}\n${where}`, w);
    }
    return { visible, hidden, message: hidden.length ? hiddenMessage(hidden.length, [...why.values()]) : null };
  }

  /** Apps whose own object the user may get in Kubernetes. */
  async visibleApps(req: FastifyRequest, apps: App[]): Promise<App[]> {
    const user = req.principal;
    if (!user) return [];
    const out: App[] = [];
    for (const a of apps) {
      const k = KINDS[a.kind];
      if (
        await this.allowed(user, {
          cluster: a.cluster,
          verb: 'get',
          group: k.group,
          version: k.version,
          kind: a.kind,
          namespace: a.namespace,
        }).catch(() => false)
      )
        out.push(a);
    }
    return out;
  }

  /** Drops tree nodes (and what hangs below them) that the user may not get. */
  async filterTree(req: FastifyRequest, cluster: string, nodes: TreeNode[]): Promise<TreeNode[]> {
    const user = req.principal;
    if (!user) return [];
    const dropped = new Set<string>();
    const out: TreeNode[] = [];
    for (const n of nodes) {
      if (n.parentId && dropped.has(n.parentId)) {
        dropped.add(n.id);
        continue;
      }
      const ok = await this.allowed(user, {
        cluster,
        verb: 'get',
        group: n.ref.group,
        version: n.ref.version,
        kind: n.ref.kind,
        namespace: n.ref.namespace,
      }).catch(() => false);
      if (ok) out.push(n);
      else dropped.add(n.id);
    }
    if (!dropped.size) return out;
    // a node's childCount says what the user may see below it (copies: the tree is shared, never changed)
    const kept = new Map<string, number>();
    for (const n of out) if (n.parentId) kept.set(n.parentId, (kept.get(n.parentId) ?? 0) + 1);
    return out.map((n) => ((kept.get(n.id) ?? 0) === n.childCount ? n : { ...n, childCount: kept.get(n.id) ?? 0 }));
  }
}

/** "3 objects hidden: your Kubernetes RBAC does not allow get on configmaps in dev (2), secrets in dev (1)". */
function hiddenMessage(
  total: number,
  why: Array<{ answer: 'denied' | 'unchecked'; where: string; count: number }>,
): string {
  const list = (ws: typeof why) => ws.map((w) => (why.length > 1 ? `${w.where} (${w.count})` : w.where)).join(', ');
  const denied = why.filter((w) => w.answer === 'denied');
  const unchecked = why.filter((w) => w.answer === 'unchecked');
  return `${objects(total)} hidden: ${[
    ...(denied.length ? [`your Kubernetes RBAC does not allow get on ${list(denied)}`] : []),
    ...(unchecked.length ? [`the access review failed for get on ${list(unchecked)}`] : []),
  ].join('; ')}`;
}
