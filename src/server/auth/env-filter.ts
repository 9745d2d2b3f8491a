// Reads filtered by environment and, in impersonation mode, by Kubernetes RBAC (issue 40, items 8 and 9): the
// helpers routes use to keep a list to what the reader may read and to refuse a single item (a 403 recorded as
// access.denied, saying nothing of the hidden item).
//
// An object's environment is the one the console's mapping (CONSOLE_ENVIRONMENTS) gives its namespace, never the
// app whose tracking label it carries (domain/env-visibility.ts). An app's own object — a Kustomization, a
// HelmRelease, an Application, an ApplicationSet — is what Kubernetes RBAC is asked about in impersonation mode.
import type { FastifyRequest } from 'fastify';
import type { Action } from '../../domain/access.ts';
import { objectEnv, splitByEnv } from '../../domain/env-visibility.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { KINDS } from '../kube/kinds.ts';
import type { AccessReviewer } from './access-review.ts';
import { allowed } from './guard.ts';

type Ref = Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>;

/** What decides environments: the console's mapping of a cluster's namespaces (undefined: no mapping configured). */
export interface EnvMapping {
  envOfNamespace(cluster: string, namespace: string): string | undefined;
}

export interface EnvFilter {
  /** true: the mapping puts this object in an environment the reader may not read (`action` there) */
  hides(ref: Ref): boolean;
  /** `items` split the same way */
  split<T>(items: readonly T[], refOf: (item: T) => Ref): { visible: T[]; hidden: T[] };
}

/** The reader's view of one cluster's objects by the environment their namespace maps to. */
export function envFilter(
  req: FastifyRequest,
  mapping: EnvMapping,
  cluster: string,
  action: Action = 'app.read',
): EnvFilter {
  // once per namespace and environment: a tree may hold 100,000 objects in a few namespaces
  const envs = new Map<string, string | undefined>();
  const envOfNamespace = (ns: string) => {
    if (!envs.has(ns)) envs.set(ns, mapping.envOfNamespace(cluster, ns));
    return envs.get(ns);
  };
  const answers = new Map<string, boolean>();
  const mayRead = (env: string) => {
    let ok = answers.get(env);
    if (ok === undefined) answers.set(env, (ok = allowed(req, action, { cluster, env })));
    return ok;
  };
  return {
    hides: (ref) => {
      const env = objectEnv(ref, envOfNamespace);
      return env !== undefined && !mayRead(env);
    },
    split: (items, refOf) => splitByEnv(items, refOf, envOfNamespace, mayRead),
  };
}

/**
 * The app object an app id names (`cluster/namespace/kind/name`; only a cluster name may hold a '/'): what
 * impersonation mode asks Kubernetes RBAC about. Undefined for an id of no kind the console knows.
 */
export function appObjectOf(
  id: string,
): { cluster: string; group: string; version: string; kind: string; namespace: string } | undefined {
  const parts = id.split('/');
  const [namespace, kind, name] = parts.slice(-3);
  const cluster = parts.slice(0, -3).join('/');
  const k = Object.values(KINDS).find((x) => x.kind.toLowerCase() === kind);
  if (!cluster || !namespace || !name || !k) return undefined;
  return { cluster, group: k.group, version: k.version, kind: k.kind, namespace };
}

/**
 * Whether the reader may see these apps (by id) in impersonation mode: its Kubernetes RBAC lets it get each one's
 * app object (as the app list decides). Without a reviewer (service mode) every app; an id of no known kind, or a
 * review that fails, is a no. One review per kind and namespace, reused for the request.
 */
export function appVisibility(
  reviewer: AccessReviewer | undefined,
  req: FastifyRequest,
): (id: string) => Promise<boolean> {
  const answers = new Map<string, Promise<boolean>>();
  return async (id) => {
    if (!reviewer) return true;
    const user = req.principal;
    const o = appObjectOf(id);
    if (!user || !o) return false;
    const key = JSON.stringify([o.cluster, o.group, o.kind, o.namespace]);
    let p = answers.get(key);
    if (!p) answers.set(key, (p = reviewer.mayGet(user, o).then((a) => a === 'allowed')));
    return p;
  };
}

/** The items whose app (by id) the reader may see in impersonation mode (every item in service mode). */
export async function withVisibleApps<T>(
  visible: (id: string) => Promise<boolean>,
  items: readonly T[],
  appIdOf: (item: T) => string,
): Promise<T[]> {
  const out: T[] = [];
  for (const item of items) if (await visible(appIdOf(item))) out.push(item);
  return out;
}
