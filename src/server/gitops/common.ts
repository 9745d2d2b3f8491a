import type { App, Condition } from '../../domain/app.ts';
import { decideEnv, type EnvRule } from '../../domain/environments.ts';
import { FREEZE_ANNOTATIONS } from '../../domain/freeze.ts';
import type { ObjectRef } from '../../domain/refs.ts';

export type Obj = Record<string, unknown>;

export const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function conditionsOf(o: Obj): Condition[] {
  const c = asObj(o.status).conditions;
  if (!Array.isArray(c)) return [];
  return c
    .map(asObj)
    .filter((x) => typeof x.type === 'string')
    .map((x) => ({
      type: String(x.type),
      status: String(x.status ?? 'Unknown'),
      ...(str(x.reason) ? { reason: str(x.reason) } : {}),
      ...(str(x.message) ? { message: str(x.message) } : {}),
      ...(str(x.lastTransitionTime) ? { lastTransitionTime: str(x.lastTransitionTime) } : {}),
    }));
}

/**
 * How apps get their environment: the `env` label's name (CONSOLE_ENV_LABEL) and the console's mapping
 * (CONSOLE_ENVIRONMENTS, domain/environments.ts). A plain string is the label alone (no mapping).
 */
export interface EnvPolicy {
  label: string;
  rules?: readonly EnvRule[] | undefined;
}
export type EnvSetting = string | EnvPolicy;

/**
 * The namespaces a set of managed objects lies in: each namespaced object's, and each Namespace object's own
 * name (deleting it deletes what is in it). Cluster-scoped objects name none.
 */
export function namespacesOf(refs: readonly ObjectRef[]): string[] {
  const out = new Set<string>();
  for (const r of refs) {
    if (r.namespace) out.add(r.namespace);
    else if (r.group === '' && r.kind === 'Namespace') out.add(r.name);
  }
  return [...out];
}

/** The namespaces named, else the app object's own. */
export function destinationsOr(named: readonly (string | undefined)[], own: string): string[] {
  const l = named.filter((n): n is string => !!n);
  return l.length ? [...new Set(l)] : [own];
}

/**
 * The app's environment and where it came from. `destinations`: the namespaces it deploys to (its target
 * namespace and its objects' namespaces; the adapters fall back to the app object's namespace). `fallback`:
 * today's environment without a label (the target namespace, else the app's namespace).
 */
export function envFieldsOf(
  setting: EnvSetting,
  metadata: Obj,
  cluster: string,
  destinations: readonly (string | undefined)[],
  fallback: string | undefined,
): Pick<App, 'env' | 'envSource' | 'envConflict'> {
  const policy = typeof setting === 'string' ? { label: setting } : setting;
  const label = str(asObj(metadata.labels)[policy.label]);
  const d = decideEnv(
    {
      cluster,
      destinations: destinations.filter((n): n is string => !!n),
      label,
      fallback: fallback ?? cluster,
    },
    policy.rules,
  );
  return { env: d.env, envSource: d.source, ...(d.conflict ? { envConflict: d.conflict } : {}) };
}

/** The freeze an app object carries (the console's annotations), if any. */
export function freezeOf(metadata: Obj): App['freeze'] | undefined {
  const a = asObj(metadata.annotations);
  const id = str(a[FREEZE_ANNOTATIONS.id]);
  if (!id) return undefined;
  const incident = str(a[FREEZE_ANNOTATIONS.incident]);
  return {
    id,
    by: str(a[FREEZE_ANNOTATIONS.by]) ?? 'unknown',
    reason: str(a[FREEZE_ANNOTATIONS.reason]) ?? '',
    until: str(a[FREEZE_ANNOTATIONS.until]) ?? '',
    ...(incident ? { incident } : {}),
  };
}
