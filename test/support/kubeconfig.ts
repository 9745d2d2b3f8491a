// The one place that decides which kubeconfig the BFF runs with in integration tests, e2e and benchmarks:
// the console's own least-privilege identity (user gitops-console, deploy/rbac.yaml as shipped), so a rule
// missing from deploy/rbac.yaml fails a test instead of hiding behind cluster-admin. The sandbox admin
// kubeconfig is for the sandbox's own set-up and the scenario helpers (kubectl edits, pushes, fixtures) only.
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { CONSOLE_KUBECONFIG_PATH, readState, type SandboxState } from '../../sandbox/sandbox.ts';
import type { ExtrasState } from '../../sandbox/extras.ts';
import { ClusterConnection } from '../../src/server/kube/connection.ts';

/**
 * The kubeconfig every BFF under test uses (in-process, as its own process, the CLI). `CONSOLE_TEST_KUBECONFIG`
 * points the suite at another console identity with the same context names (e.g. an older role, to show a test
 * fails without a rule); global set-up refuses one that may read Secrets.
 */
export function bffKubeconfig(): string {
  const path = process.env.CONSOLE_TEST_KUBECONFIG || CONSOLE_KUBECONFIG_PATH;
  if (!existsSync(path))
    throw new Error(
      `${path} is missing: the sandbox writes it at start (npm run sandbox -- up, or down and up for a sandbox older than it)`,
    );
  return path;
}

/** A raw connection to one cluster as the console's identity (what the BFF itself sends). */
export function consoleConnection(cluster: string): ClusterConnection {
  const kc = new KubeConfig();
  kc.loadFromFile(bffKubeconfig());
  kc.setCurrentContext(cluster);
  return new ClusterConnection(cluster, kc);
}

/**
 * Refuses to run the suite as anything but the shipped least privilege: asked as the BFF's identity, the
 * apiserver must allow what deploy/rbac.yaml grants (a dry-run patch of a Deployment) and refuse what it does
 * not (reading Secrets) — an admin kubeconfig in the console's place would pass every test and prove nothing.
 */
export async function assertBffIdentityIsLeastPrivilege(clusters: string[]): Promise<void> {
  for (const cluster of clusters) {
    const conn = consoleConnection(cluster);
    const can = async (verb: string, group: string, resource: string) =>
      (
        await conn.json<{ status?: { allowed?: boolean } }>(
          'POST',
          '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          {
            body: JSON.stringify({
              apiVersion: 'authorization.k8s.io/v1',
              kind: 'SelfSubjectAccessReview',
              spec: { resourceAttributes: { verb, group, resource, namespace: 'dev' } },
            }),
            contentType: 'application/json',
            timeoutMs: 10_000,
          },
        )
      ).status?.allowed === true;
    try {
      if (await can('get', '', 'secrets'))
        throw new Error(`${bffKubeconfig()} (${cluster}) may read Secrets: not the console's least-privilege identity`);
      if (!(await can('patch', 'apps', 'deployments')))
        throw new Error(
          `${bffKubeconfig()} (${cluster}) may not patch Deployments: deploy/rbac.yaml is not applied as shipped`,
        );
    } finally {
      conn.close();
    }
  }
}

/**
 * The console's forge token file for the sandbox forge (the host of the repo the controllers fetch), as a
 * deployment would mount it (CONSOLE_FORGE_TOKENS_FILE): the freeze write-back then opens a pull request there.
 * Empty when the sandbox has no forge.
 */
export function sandboxForgeEnv(): { CONSOLE_FORGE_TOKENS_FILE?: string } {
  const forge = (readState() as (SandboxState & ExtrasState) | undefined)?.forge;
  return forge && existsSync(forge.consoleTokensFile) ? { CONSOLE_FORGE_TOKENS_FILE: forge.consoleTokensFile } : {};
}
