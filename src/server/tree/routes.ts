import type { FastifyPluginAsync } from 'fastify';
import { stringify } from 'yaml';
import {
  EventsResponse,
  ObjectQuery,
  ObjectResponse,
  TreeResponse,
  TreeWindowQuery,
  type NodeDriftDto,
} from '../../api/schemas.ts';
import { nodeSync, summarize, type TreeNode } from '../../domain/tree.ts';
import { managersOf, ownersByPath } from '../../domain/managed-fields.ts';
import { clusterHttpError, HttpError } from '../http/errors.ts';
import { validated } from '../http/respond.ts';
import { appOf } from '../apps/index.ts';
import type { AppDeps } from '../deps.ts';
import { envFilter, recordDenial, type EnvFilter } from '../auth/index.ts';
import type { Principal } from '../auth/index.ts';
import { connectionFor } from '../auth/index.ts';
import { AppTreeMemo } from './app-tree.ts';
import type { DriftTracker } from '../drift/index.ts';
import { maskSecrets } from '../kube/secret-mask.ts';
import {
  filterActive,
  parseCursor,
  parseThrough,
  WALK_END,
  WALK_START,
  windowTree,
  type WindowRequest,
} from '../../domain/tree-window.ts';

/**
 * Marks the nodes with an open drift episode, and makes such a row OutOfSync (domain/tree.ts nodeSync): a map lookup
 * per node, nothing when no episode is open. `flipped` counts the rows that said Synced (the summary's counts move).
 */
export function withDrift(
  nodes: TreeNode[],
  drift: Pick<DriftTracker, 'openCount' | 'forId'> | undefined,
): { nodes: Array<TreeNode & { drift?: NodeDriftDto }>; flipped: number } {
  if (!drift?.openCount) return { nodes, flipped: 0 };
  let flipped = 0;
  const out = nodes.map((n) => {
    const d = drift.forId(n.id);
    if (!d) return n;
    const { kind, managers, fields, since, lastWriteAt, writes } = d;
    const sync = nodeSync(n.sync, true);
    if (sync !== n.sync) flipped++;
    return { ...n, ...(sync ? { sync } : {}), drift: { kind, managers, fields, since, lastWriteAt, writes } };
  });
  return { nodes: out, flipped };
}

/**
 * The tree without the nodes `filter` hides (objects in an environment the reader may not read) and what hangs
 * below them; `hidden` counts every node left out. A node's childCount says what is left below it (copies: the
 * tree is shared, never changed).
 */
export function withoutOtherEnvs<N extends TreeNode>(nodes: N[], filter: EnvFilter): { nodes: N[]; hidden: number } {
  const dropped = new Set<string>();
  const out: N[] = [];
  for (const n of nodes) {
    if ((n.parentId && dropped.has(n.parentId)) || filter.hides(n.ref)) dropped.add(n.id);
    else out.push(n);
  }
  if (!dropped.size) return { nodes, hidden: 0 };
  const kept = new Map<string, number>();
  for (const n of out) if (n.parentId) kept.set(n.parentId, (kept.get(n.parentId) ?? 0) + 1);
  return {
    nodes: out.map((n) => ((kept.get(n.id) ?? 0) === n.childCount ? n : { ...n, childCount: kept.get(n.id) ?? 0 })),
    hidden: dropped.size,
  };
}

/** The window a tree request asks for (api/tree.ts TreeWindowQuery); a repeated parameter is a 400, not a 500. */
export function treeWindowOf(query: Record<string, unknown>): WindowRequest | undefined {
  if (query.window === undefined) return undefined;
  const parsed = TreeWindowQuery.safeParse(query);
  if (!parsed.success)
    throw new HttpError(400, 'BadRequest', `invalid tree window: ${parsed.error.issues[0]?.path.join('.')}`);
  const q = parsed.data;
  // a keyset cursor (domain/tree-window.ts): a node id the walk continues after, never looked up (it may be gone);
  // with `through`, a range (a page the view holds, asked for again)
  if (q.after && !parseCursor(q.after))
    throw new HttpError(
      400,
      'BadRequest',
      `invalid tree window: after is not a node id (cluster/group/Kind/namespace-or-_/name) nor ${WALK_START}`,
    );
  if (q.through && !q.after) throw new HttpError(400, 'BadRequest', 'invalid tree window: through needs after');
  if (q.through && !parseThrough(q.through))
    throw new HttpError(
      400,
      'BadRequest',
      `invalid tree window: through is not a node id (cluster/group/Kind/namespace-or-_/name) nor ${WALK_END}`,
    );
  const filter = { health: q.health ?? '', sync: q.sync ?? '', kind: q.kind ?? '', text: (q.q ?? '').slice(0, 200) };
  return {
    window: q.window,
    depth: q.depth,
    ...(q.under ? { under: q.under } : {}),
    ...(q.after ? { after: q.after } : {}),
    ...(q.through ? { through: q.through } : {}),
    ...(filterActive(filter) ? { filter } : {}),
    ...(q.problems === '1' ? { problems: true } : {}),
    limit: q.limit,
  };
}

export const treeRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const index = deps.index;
  const memo = index ? new AppTreeMemo(index) : undefined;
  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/tree',
    { config: { access: { action: 'app.read', scope: 'app' } } },
    async (req) => {
      if (!index) throw new HttpError(400, 'BadRequest', 'no object index');
      const a = await appOf(req, deps);
      const id = a.id;
      // shared, never changed: the drift marks and the RBAC filter below make new arrays and objects
      // an Argo CD app's Application names its hooks and their last runs (domain/argo-hooks.ts)
      const tree = (memo as AppTreeMemo).tree(
        a,
        a.controller === 'argocd' ? (deps.catalog.rawObject(a.id) as Record<string, unknown> | undefined) : undefined,
      );
      // drifted rows are OutOfSync before any filter or window reads them (a filter on sync finds them)
      // (only when this app has an open episode: a drift elsewhere never costs a pass over a 100,000-node tree)
      const drifted = deps.drift?.forApp(id) ? withDrift(tree.nodes, deps.drift) : { nodes: tree.nodes, flipped: 0 };
      const summary = drifted.flipped
        ? {
            ...tree.summary,
            sync: {
              ...tree.summary.sync,
              Synced: tree.summary.sync.Synced - drifted.flipped,
              OutOfSync: tree.summary.sync.OutOfSync + drifted.flipped,
            },
          }
        : tree.summary;
      // impersonation: what the user's Kubernetes RBAC forbids is not in its tree at all
      const seen = deps.reviewer ? await deps.reviewer.filterTree(req, a.cluster, drifted.nodes) : drifted.nodes;
      // objects in an environment this user may not read (by the mapping of their namespace, never by the app's
      // label they carry), and what hangs below them, are left out and counted (issue 40)
      const byEnv = withoutOtherEnvs(seen, envFilter(req, deps.catalog, a.cluster));
      const all = byEnv.nodes;
      const query = req.query as Record<string, unknown>;
      // ?window=N (and ?under=, ?after=, ?through=, filters): a window onto a very large tree (domain/tree-window.ts)
      const win = treeWindowOf(query);
      const windowed = win ? windowTree(all, win) : undefined;
      // ?depth=N: only the first levels (childCount still tells what is below), for a fast first paint
      const depthParam = Number(typeof query.depth === 'string' ? query.depth : NaN);
      const shown =
        windowed?.nodes ??
        (Number.isInteger(depthParam) && depthParam >= 0 ? all.filter((n) => n.depth <= depthParam) : all);
      const nodes = shown;
      // Validating 20,000 nodes with zod costs more than building them; the node shape is fixed by the
      // domain type (TreeNode ⊂ TreeNodeDto, checked by the compiler below) and by the API tests.
      const body: TreeResponse = {
        appId: id,
        generatedAt: new Date().toISOString(),
        nodes,
        // what is hidden counts in no total, health or reason (the reason names the worst object)
        summary: TreeResponse.shape.summary.parse(byEnv.hidden ? summarize(all) : summary),
        ...(byEnv.hidden ? { hiddenByEnvironment: byEnv.hidden } : {}),
        ...(nodes.length < all.length ? { partial: true } : {}),
        ...(windowed
          ? {
              topCount: windowed.topCount,
              ...(windowed.next !== undefined ? { next: windowed.next } : {}),
              kinds: windowed.kinds,
              ...(windowed.matched !== undefined ? { matched: windowed.matched } : {}),
              ...(windowed.missing ? { missing: true as const } : {}),
            }
          : {}),
      };
      return body;
    },
  );

  app.get(
    '/api/clusters/:cluster/object',
    { config: { access: { action: 'app.read', scope: 'object' } } },
    async (req) => {
      const { cluster } = req.params as { cluster: string };
      const q = ObjectQuery.safeParse(req.query);
      if (!q.success || !index) throw new HttpError(400, 'BadRequest', 'invalid object reference');
      if (!deps.clusters.clusters.has(cluster)) throw new HttpError(404, 'NotFound', `no cluster ${cluster}`);
      if (deps.reviewer) {
        const user = req.principal as Principal;
        const ok = await deps.reviewer
          .allowed(user, { cluster, verb: 'get', ...q.data, namespace: q.data.namespace || undefined })
          .catch(() => false);
        if (!ok) {
          const reason = `Kubernetes RBAC does not let ${user.name} get ${q.data.kind} in ${q.data.namespace || 'the cluster scope'}`;
          recordDenial(deps.recorder, req, 'app.read', { cluster }, reason);
          throw new HttpError(403, 'Forbidden', reason, cluster);
        }
      }
      const obj = index.get(cluster, q.data);
      if (!obj)
        throw new HttpError(
          404,
          'NotFound',
          `${q.data.kind} ${q.data.namespace ? `${q.data.namespace}/` : ''}${q.data.name} is not in the console's cache`,
          cluster,
        );
      const masked = maskSecrets(obj);
      const { managedFields: _mf, ...metaRest } = (masked.metadata ?? {}) as Record<string, unknown>;
      return validated(ObjectResponse, {
        ref: {
          cluster,
          group: q.data.group,
          version: q.data.version,
          kind: q.data.kind,
          ...(q.data.namespace ? { namespace: q.data.namespace } : {}),
          name: q.data.name,
        },
        yaml: stringify({ ...masked, metadata: metaRest }, { lineWidth: 0 }),
        owners: ownersByPath(obj),
        managers: managersOf(obj),
      });
    },
  );

  app.get(
    '/api/clusters/:cluster/events',
    { config: { access: { action: 'app.read', scope: 'object' } } },
    async (req) => {
      const { cluster } = req.params as { cluster: string };
      const q = ObjectQuery.safeParse(req.query);
      const mc = deps.clusters.clusters.get(cluster);
      if (!q.success) throw new HttpError(400, 'BadRequest', 'invalid object reference');
      if (!mc) throw new HttpError(404, 'NotFound', `no cluster ${cluster}`);
      const sel = new URLSearchParams({
        fieldSelector: `involvedObject.kind=${q.data.kind},involvedObject.name=${q.data.name}`,
        limit: '100',
      });
      const path = q.data.namespace
        ? `/api/v1/namespaces/${encodeURIComponent(q.data.namespace)}/events?${sel}`
        : `/api/v1/events?${sel}`;
      try {
        // impersonation: the user's own RBAC decides whether it may read these events
        const conn = connectionFor(mc, deps.reviewer, req.principal as Principal);
        const list = await conn.json<{ items?: Array<Record<string, unknown>> }>('GET', path, { timeoutMs: 10_000 });
        const events = (list.items ?? [])
          .map((e) => ({
            type: String(e.type ?? ''),
            reason: String(e.reason ?? ''),
            message: String(e.message ?? ''),
            count: typeof e.count === 'number' ? e.count : 1,
            lastSeen: String(
              e.lastTimestamp ??
                e.eventTime ??
                (e.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp ??
                '',
            ),
            source: String((e.source as { component?: string } | undefined)?.component ?? e.reportingComponent ?? ''),
          }))
          .sort((a, b) => b.lastSeen.localeCompare(a.lastSeen));
        return validated(EventsResponse, { events });
      } catch (e) {
        throw clusterHttpError(e, 'cannot read events', cluster);
      }
    },
  );
};
