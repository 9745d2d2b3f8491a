// The console's environment mapping (CONSOLE_ENVIRONMENTS) for the local sandbox: a cluster of one environment is
// that environment in every namespace (prod/*=prod: a team's own namespaces in prod are prod too); a cluster of
// several has one rule per environment namespace (nonprod/dev=dev, nonprod/staging=staging; its other namespaces
// are unknown).
import { formatEnvMapping, type EnvRule } from '../domain/environments.ts';

/** Per sandbox cluster: one environment → the whole cluster is it; several → one rule per environment namespace. */
export function sandboxEnvironmentRules(clusters: ReadonlyArray<{ name: string; namespaces: string[] }>): EnvRule[] {
  return clusters.flatMap((c) =>
    c.namespaces.length === 1
      ? [{ cluster: c.name, namespace: '*', env: c.namespaces[0] as string }]
      : c.namespaces.map((ns) => ({ cluster: c.name, namespace: ns, env: ns })),
  );
}

/** The same as a CONSOLE_ENVIRONMENTS value (consoles and CLIs started by tests against the sandbox). */
export function sandboxEnvironments(topology: Readonly<Record<string, string[]>>): string {
  return formatEnvMapping(
    sandboxEnvironmentRules(Object.entries(topology).map(([name, namespaces]) => ({ name, namespaces }))),
  );
}
