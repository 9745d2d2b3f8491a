// Roles, actions and grants: who may do what, where. Pure, shared by the BFF
// (which enforces it) and the SPA (which only uses it to explain disabled actions).

export const ROLES = ['viewer', 'developer', 'reviewer', 'oncall', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What each action needs. Every role can read apps (trees, diffs, objects) in its scope;
 * the other actions belong to the roles named here. `admin` can do everything.
 */
export const ACTIONS = {
  'app.read': ['viewer', 'developer', 'reviewer', 'oncall', 'auditor', 'admin'],
  'app.reconcile': ['developer', 'oncall', 'admin'],
  // a prune preview (read-only planning); approving one is a different person's job
  'prune.request': ['developer', 'reviewer', 'oncall', 'admin'],
  'prune.approve': ['reviewer', 'admin'],
  'freeze.toggle': ['oncall', 'admin'],
  // opens a pull request that reverts an environment to an earlier release (never a direct push)
  'release.rollback': ['developer', 'oncall', 'admin'],
  // promote, abort, retry, pause or resume an Argo Rollouts canary (in the on-call environments — prod by default,
  // CONSOLE_ROLLOUT_ONCALL_ENVS — on-call and admin only: whyNotRolloutControl)
  'rollout.control': ['developer', 'oncall', 'admin'],
  // an app's release chain (its nine states, what ran when, the manifests per release): developers see their
  // apps' releases too, to choose what to roll back to; the evidence log itself stays evidence.read
  'release.read': ['developer', 'reviewer', 'oncall', 'auditor', 'admin'],
  'evidence.read': ['reviewer', 'oncall', 'auditor', 'admin'],
  'evidence.verify': ['auditor', 'admin'],
  'users.manage': ['admin'],
  // the event sinks' health and dead letters, and a dead letter's retry (every cluster's events: admin on '*')
  'sinks.manage': ['admin'],
} as const satisfies Record<string, readonly Role[]>;
export type Action = keyof typeof ACTIONS;
export const ACTION_NAMES = Object.keys(ACTIONS) as [Action, ...Action[]];

/** A role on some clusters and environments ('*' = all). */
export interface Grant {
  role: Role;
  clusters: string[];
  envs: string[];
}

/** Where an action happens. A missing field means "anywhere": the question is then "somewhere at all?". */
export interface Scope {
  cluster?: string | undefined;
  env?: string | undefined;
}

function matches(list: string[], value: string | undefined): boolean {
  return value === undefined || list.includes('*') || list.includes(value);
}

function covers(g: Grant, scope: Scope): boolean {
  return matches(g.clusters, scope.cluster) && matches(g.envs, scope.env);
}

export function can(grants: readonly Grant[], action: Action, scope: Scope = {}): boolean {
  const roles: readonly Role[] = ACTIONS[action];
  return grants.some((g) => roles.includes(g.role) && covers(g, scope));
}

function where(scope: Scope): string {
  if (scope.cluster && scope.env) return ` on ${scope.cluster}/${scope.env}`;
  if (scope.cluster) return ` on cluster ${scope.cluster}`;
  if (scope.env) return ` in ${scope.env}`;
  return '';
}

/** What each action lets someone do, as the end of "You need … to …". */
const PURPOSE: { readonly [A in Action]?: string } = {
  'app.read': 'see this app',
  'app.reconcile': 'reconcile this app',
  'prune.request': 'request a prune preview',
  'prune.approve': 'approve this prune',
  'freeze.toggle': 'freeze or unfreeze deployments',
  'release.rollback': 'open a rollback pull request',
  'rollout.control': 'control this canary',
  'release.read': "see this app's releases",
  'evidence.read': "see this app's evidence",
  'evidence.verify': 'verify the evidence chain',
  'users.manage': 'manage users',
  'sinks.manage': 'manage event sinks',
};

/** "You need the developer or oncall role on nonprod/dev to reconcile this app"; every role can read: "a role". */
function youNeed(action: Action, place: string): string {
  const who = action === 'app.read' ? 'a role' : `the ${rolesFor(action)} role`;
  return `You need ${who}${place} to ${PURPOSE[action] ?? action.replace('.', ' ')}`;
}

/** Why an action is not allowed, in words (undefined when it is). */
export function whyNot(grants: readonly Grant[], action: Action, scope: Scope = {}): string | undefined {
  if (can(grants, action, scope)) return undefined;
  return youNeed(action, where(scope));
}

/**
 * The same for a refused app, said to the user: the cluster (it is in the URL) but not the app's
 * environment, which would tell someone without access that the app exists and where it runs.
 */
export function whyNotOnApp(action: Action, cluster: string | undefined): string {
  return youNeed(action, cluster && cluster !== '*' ? ` on this app's environment in ${cluster}` : '');
}

/** "developer or oncall" (admin, who may do everything, goes unsaid). */
export function rolesFor(action: Action): string {
  const roles = ACTIONS[action].filter((r) => r !== 'admin');
  return roles.length > 1 ? `${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}` : (roles[0] ?? 'admin');
}

/** "reviewer@nonprod/dev", "admin" — how grants are written in config and shown in the header. */
export function formatGrant(g: Grant): string {
  const c = g.clusters.includes('*') ? '*' : g.clusters.join(',');
  const e = g.envs.includes('*') ? '*' : g.envs.join(',');
  if (c === '*' && e === '*') return g.role;
  return `${g.role}@${c}/${e}`;
}

/** Parses "role", "role@cluster", "role@cluster/env" (comma-separated lists and * allowed). */
export function parseGrant(s: string): Grant {
  const m = /^([a-z]+)(?:@([^/\s]+)(?:\/([^\s]+))?)?$/.exec(s.trim());
  const role = m?.[1];
  if (!m || !role || !(ROLES as readonly string[]).includes(role))
    throw new Error(`invalid grant "${s}": expected role[@cluster[/env]] with role one of ${ROLES.join(', ')}`);
  const split = (v: string | undefined) => (v ? v.split(',').filter(Boolean) : ['*']);
  return { role: role as Role, clusters: split(m[2]), envs: split(m[3]) };
}

/** Where only on-call (and admin) control canaries unless configured otherwise. */
export const DEFAULT_ROLLOUT_ONCALL_ENVS = ['prod'];

/**
 * Why this user may not control a canary here (undefined: they may): the role `rollout.control` asks for, and in
 * an on-call environment the oncall or admin role itself (a developer's grant does not reach a prod canary).
 */
export function whyNotRolloutControl(
  grants: readonly Grant[],
  scope: Scope,
  oncallEnvs: readonly string[] = DEFAULT_ROLLOUT_ONCALL_ENVS,
): string | undefined {
  if (!can(grants, 'rollout.control', scope)) return whyNot(grants, 'rollout.control', scope);
  if (scope.env && oncallEnvs.includes(scope.env))
    if (!grants.some((g) => (g.role === 'oncall' || g.role === 'admin') && covers(g, scope)))
      return `You need the oncall role on ${scope.cluster ? `${scope.cluster}/` : ''}${scope.env} to control a canary there (in ${oncallEnvs.join(', ')} only on-call does)`;
  return undefined;
}
