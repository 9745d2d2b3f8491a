// The contract tier's one bare cluster for the run (sandbox/bare-cluster.ts: etcd and an apiserver per cluster,
// nonprod and prod, no controllers), with the seed's GitOps objects (./seed.ts). Test files get its directory and
// kubeconfigs through provide/inject; ./setup-env.ts points each test file's process at it (GITOPS_SANDBOX_DIR),
// so the sandbox helpers (kubectl, the console kubeconfig) reach the bare cluster, never the real sandbox.
// The seed is applied here, after startBareCluster, so it never enters the bare cluster's cache (a pristine cluster).
import type { TestProject } from 'vitest/node';
import { startBareCluster, stopBareCluster, bareClusterDir, type BareCluster } from '../../sandbox/bare-cluster.ts';
import { kubectlRaw } from '../../sandbox/cluster-access.ts';
import { assertBffIdentityIsLeastPrivilege } from '../support/kubeconfig.ts';
import { seedObjects } from './seed.ts';

export interface ContractCluster {
  /** the bare cluster's sandbox-shaped directory */
  dir: string;
  /** admin kubeconfig, one context per cluster (set-up only) */
  adminKubeconfig: string;
  /** the console's own identity (deploy/rbac.yaml), one context per cluster */
  consoleKubeconfig: string;
  clusters: string[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    contract: ContractCluster;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now();
  let bare: BareCluster | undefined = await startBareCluster(bareClusterDir());
  const startedIn = ((Date.now() - t0) / 1000).toFixed(1);
  try {
    for (const c of bare.clusters)
      kubectlRaw(c.kubeconfig, ['apply', '--server-side', '--field-manager=sandbox', '-f', '-'], seedObjects(c));
    const saved = process.env.CONSOLE_TEST_KUBECONFIG;
    process.env.CONSOLE_TEST_KUBECONFIG = bare.consoleKubeconfig;
    try {
      await assertBffIdentityIsLeastPrivilege(bare.clusters.map((c) => c.name));
    } finally {
      if (saved === undefined) delete process.env.CONSOLE_TEST_KUBECONFIG;
      else process.env.CONSOLE_TEST_KUBECONFIG = saved;
    }
  } catch (e) {
    await stopBareCluster(bare);
    throw e;
  }
  const took = ((Date.now() - t0) / 1000).toFixed(1);
  process.stderr.write(
    `contract: bare cluster up in ${took}s (${startedIn}s ${bare.start}, then the seed) (${bare.dir})\n`,
  );
  project.provide('contract', {
    dir: bare.dir,
    adminKubeconfig: bare.adminKubeconfig,
    consoleKubeconfig: bare.consoleKubeconfig,
    clusters: bare.clusters.map((c) => c.name),
  });
  return async () => {
    if (bare) await stopBareCluster(bare);
    bare = undefined;
  };
}
