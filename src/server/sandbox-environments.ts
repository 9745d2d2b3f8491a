// The console's environment mapping (CONSOLE_ENVIRONMENTS) for the local sandbox: each cluster's environment
// namespaces are that environment (nonprod/dev=dev, nonprod/staging=staging, prod/prod=prod).
import { formatEnvMapping, type EnvRule } from '../domain/environments.ts';

/** One rule per environment namespace of each sandbox cluster: the namespace names its environment. */
export function sandboxEnvironmentRules(clusters: ReadonlyArray<{ name: string; namespaces: string[] }>): EnvRule[] {
  return clusters.flatMap((c) => c.namespaces.map((ns) => ({ cluster: c.name, namespace: ns, env: ns })));
}

/** The same as a CONSOLE_ENVIRONMENTS value (consoles and CLIs started by tests against the sandbox). */
export function sandboxEnvironments(topology: Readonly<Record<string, string[]>>): string {
  return formatEnvMapping(
    sandboxEnvironmentRules(Object.entries(topology).map(([name, namespaces]) => ({ name, namespaces }))),
  );
}
