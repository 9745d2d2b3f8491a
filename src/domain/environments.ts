// Which environment an app belongs to: the console's mapping of cluster + destination namespace → environment
// (CONSOLE_ENVIRONMENTS), not a label the app's owners write. Pure: parsed at start-up, applied by the GitOps
// adapters to every app. Every permission check (roles are granted per cluster and environment) uses the result.
//
// Rules: `cluster/namespace=env`, separated by commas or new lines; `*` in a cluster or namespace matches any run
// of characters (`prod/*=prod`, `nonprod/team-*=dev`). The first rule that matches decides; a rule that an
// earlier rule already covers entirely is refused (it could never apply). Without any rule the `env` label
// decides, as before (shown as "env from a label").
//
// With rules, an app's environment is that of every namespace it deploys to (its destinations): all of them
// must map, to one environment. An app a rule does not cover, or whose objects lie in several environments, is
// in the environment `unknown`: only a grant on every environment of its cluster (`role@cluster`, `role`) covers
// it. A label that disagrees with the mapping is reported (the mapping decides).

/** The environment of an app no rule covers (or whose objects lie in several environments). */
export const UNKNOWN_ENV = 'unknown';

export interface EnvRule {
  cluster: string;
  namespace: string;
  env: string;
}

/**
 * Where an app's environment came from: the console's mapping, the app object's label (no mapping configured),
 * the destination namespace (no mapping, no label), or nowhere (a mapping is configured but does not cover it).
 */
export const ENV_SOURCES = ['mapping', 'label', 'namespace', 'unmapped'] as const;
export type EnvSource = (typeof ENV_SOURCES)[number];

export interface EnvDecision {
  env: string;
  source: EnvSource;
  /** why the app is flagged: its label disagrees with the mapping, or the mapping does not decide it */
  conflict?: string;
}

export interface EnvInput {
  cluster: string;
  /** the namespaces the app deploys to (never empty: the adapters fall back to the app object's namespace) */
  destinations: string[];
  /** what the app object's env label says, if anything */
  label?: string | undefined;
  /** today's environment without a label: the target namespace, else the app's namespace, else the cluster */
  fallback: string;
}

// a kubeconfig context may hold a '/' (an EKS ARN): the namespace is after the last one
const CLUSTER_RE = /^[^\s=,]+$/;
const NAMESPACE_RE = /^[a-z0-9*]([-a-z0-9*]{0,61}[a-z0-9*])?$/;
const ENV_RE = /^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$/;

/** `*` matches any run of characters (none included); everything else literally. */
export function globMatch(pattern: string, value: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  let at = first.length;
  const end = value.length - last.length;
  for (const mid of parts.slice(1, -1)) {
    const i = value.indexOf(mid, at);
    if (i < 0 || i + mid.length > end) return false;
    at = i + mid.length;
  }
  return true;
}

const matches = (r: EnvRule, cluster: string, namespace: string) =>
  globMatch(r.cluster, cluster) && globMatch(r.namespace, namespace);

/**
 * Parses CONSOLE_ENVIRONMENTS: `cluster/namespace=env` rules separated by commas or new lines (`#` starts a
 * comment line). Throws one error naming every bad rule; an empty text is "no mapping" (an empty list).
 */
export function parseEnvMapping(text: string): EnvRule[] {
  const rules: EnvRule[] = [];
  const errors: string[] = [];
  const items = text
    .split('\n')
    .filter((l) => !l.trim().startsWith('#'))
    .flatMap((l) => l.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    const m = /^([^=]+)\/([^/=]+)=([^/=]+)$/.exec(item);
    const [cluster = '', namespace = '', env = ''] = m ? [m[1]?.trim(), m[2]?.trim(), m[3]?.trim()] : [];
    if (!m) {
      errors.push(`"${item}": expected cluster/namespace=env`);
      continue;
    }
    if (!CLUSTER_RE.test(cluster)) errors.push(`"${item}": "${cluster}" is not a cluster name or pattern`);
    else if (!NAMESPACE_RE.test(namespace))
      errors.push(`"${item}": "${namespace}" is not a namespace name or pattern (lower-case letters, digits, -, *)`);
    else if (env === UNKNOWN_ENV)
      errors.push(`"${item}": "${UNKNOWN_ENV}" is the environment of apps no rule covers, not one a rule may name`);
    else if (!ENV_RE.test(env))
      errors.push(`"${item}": "${env}" is not an environment name (lower-case letters, digits, -, _, .)`);
    else {
      const rule = { cluster, namespace, env };
      // the literal text of a rule's patterns, matched by an earlier rule's patterns: every app it would decide
      // is decided by that earlier rule already
      const earlier = rules.find((r) => matches(r, cluster, namespace));
      if (earlier)
        errors.push(
          `"${item}" never applies: the earlier rule ${earlier.cluster}/${earlier.namespace}=${earlier.env} covers it (put the more specific rule first)`,
        );
      else rules.push(rule);
    }
  }
  if (errors.length) throw new Error(`CONSOLE_ENVIRONMENTS: ${errors.join('; ')}`);
  return rules;
}

/** The environment the first matching rule names, if one does. */
export function mappedEnv(rules: readonly EnvRule[], cluster: string, namespace: string): string | undefined {
  return rules.find((r) => matches(r, cluster, namespace))?.env;
}

/** `cluster/namespace=env` lines again (the settings as the console reads them). */
export function formatEnvMapping(rules: readonly EnvRule[]): string {
  return rules.map((r) => `${r.cluster}/${r.namespace}=${r.env}`).join(',');
}

const labelSays = (label: string | undefined) => (label ? ` (label says ${label})` : '');

/** The app's environment: the mapping's when one is configured, else the label's, else the fallback. */
export function decideEnv(input: EnvInput, rules: readonly EnvRule[] | undefined): EnvDecision {
  const label = input.label || undefined;
  if (!rules || rules.length === 0)
    return label ? { env: label, source: 'label' } : { env: input.fallback, source: 'namespace' };
  const destinations = [...new Set(input.destinations)].sort();
  const byNs = destinations.map((ns) => ({ ns, env: mappedEnv(rules, input.cluster, ns) }));
  const uncovered = byNs.filter((d) => d.env === undefined).map((d) => `${input.cluster}/${d.ns}`);
  if (uncovered.length || destinations.length === 0)
    return {
      env: UNKNOWN_ENV,
      source: 'unmapped',
      conflict: `no rule of the console's environment mapping covers ${uncovered.join(', ') || `${input.cluster} (no destination namespace)`}${labelSays(label)}: environment ${UNKNOWN_ENV}`,
    };
  const envs = [...new Set(byNs.map((d) => d.env as string))];
  if (envs.length > 1)
    return {
      env: UNKNOWN_ENV,
      source: 'unmapped',
      conflict: `deploys to several environments (${byNs.map((d) => `${d.ns} → ${String(d.env)}`).join(', ')})${labelSays(label)}: environment ${UNKNOWN_ENV}`,
    };
  const env = envs[0] as string;
  return label && label !== env
    ? { env, source: 'mapping', conflict: `label says ${label}; the console's mapping says ${env}` }
    : { env, source: 'mapping' };
}
