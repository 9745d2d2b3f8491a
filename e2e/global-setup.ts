// e2e: the real sandbox (reused if up), the built SPA, and the BFF as its own process, running as the
// console's own least-privilege identity (test/support/kubeconfig.ts), never as the sandbox admin.
import { startSandbox } from '../sandbox/sandbox.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signIn } from '../test/support/auth.ts';
import { spawnBff, storageStateFor } from '../test/support/bff-process.ts';
import { assertBffIdentityIsLeastPrivilege } from '../test/support/kubeconfig.ts';
import { sandboxDefaults, type SandboxFacts } from '../src/server/sandbox-defaults.ts';

export default async function globalSetup(): Promise<() => Promise<void>> {
  const st = await startSandbox({ reuse: true });
  await assertBffIdentityIsLeastPrivilege(st.clusters.map((c) => c.name));
  // the same checks, registry mirror and forge token sandbox mode configures (src/server/sandbox-defaults.ts)
  const d = sandboxDefaults(st as unknown as SandboxFacts, mkdtempSync(join(tmpdir(), 'console-e2e-conf-')));
  const bff = await spawnBff('console-e2e', {
    env: {
      ...(d.verificationsFile ? { CONSOLE_VERIFICATIONS_FILE: d.verificationsFile } : {}),
      CONSOLE_VERIFICATION_INTERVAL_S: '600',
      ...(d.registryMirrors ? { CONSOLE_REGISTRY_MIRRORS: d.registryMirrors } : {}),
    },
  });
  process.env.E2E_BASE_URL = bff.base;
  process.env.E2E_BFF_LOG = bff.log;
  // specs start signed in as admin (test.use storageState); the auth spec signs in by itself
  process.env.E2E_STORAGE = bff.storageState;
  // the on-call user (incident freeze spec)
  const oncall = join(bff.dataDir, 'storage-oncall.json');
  writeFileSync(oncall, JSON.stringify(storageStateFor(await signIn(bff.base, 'oncall'))));
  process.env.E2E_STORAGE_ONCALL = oncall;
  process.env.E2E_DATA_DIR = bff.dataDir;
  return () => bff.stop();
}
