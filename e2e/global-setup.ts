// e2e: the real sandbox (reused if up), the built SPA, and the BFF as its own process, running as the
// console's own least-privilege identity (test/support/kubeconfig.ts), never as the sandbox admin.
import { startSandbox } from '../sandbox/sandbox.ts';
import { spawnBff } from '../test/support/bff-process.ts';
import { assertBffIdentityIsLeastPrivilege } from '../test/support/kubeconfig.ts';

export default async function globalSetup(): Promise<() => Promise<void>> {
  const st = await startSandbox({ reuse: true });
  await assertBffIdentityIsLeastPrivilege(st.clusters.map((c) => c.name));
  const bff = await spawnBff('console-e2e');
  process.env.E2E_BASE_URL = bff.base;
  process.env.E2E_BFF_LOG = bff.log;
  // specs start signed in as admin (test.use storageState); the auth spec signs in by itself
  process.env.E2E_STORAGE = bff.storageState;
  process.env.E2E_DATA_DIR = bff.dataDir;
  return () => bff.stop();
}
