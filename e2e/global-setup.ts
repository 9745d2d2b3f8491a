// e2e: the real sandbox (reused if up), the built SPA, and the BFF as its own process, running as the
// console's own least-privilege identity (test/support/kubeconfig.ts), never as the sandbox admin.
import { startSandbox } from '../sandbox/sandbox.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signIn } from '../test/support/auth.ts';
import { spawnBff, storageStateFor } from '../test/support/bff-process.ts';
import { assertBffIdentityIsLeastPrivilege } from '../test/support/kubeconfig.ts';

export default async function globalSetup(): Promise<() => Promise<void>> {
  const st = await startSandbox({ reuse: true });
  await assertBffIdentityIsLeastPrivilege(st.clusters.map((c) => c.name));
  // the release recorder's verification checks (the sandbox's business stand-ins) and tag resolution (its registry)
  const extras = st as unknown as {
    registry?: { url: string };
    business?: { endpoints: Record<string, { url: string }> };
  };
  const conf = mkdtempSync(join(tmpdir(), 'console-e2e-conf-'));
  const verifications = join(conf, 'verifications.json');
  writeFileSync(
    verifications,
    JSON.stringify(
      Object.fromEntries(
        st.clusters.flatMap((c) =>
          c.namespaces.flatMap((env) => {
            const e = extras.business?.endpoints[env];
            return e ? [[`${c.name}/${env}`, { url: e.url, expectStatus: 200, timeoutMs: 3000 }]] : [];
          }),
        ),
      ),
    ),
  );
  const bff = await spawnBff('console-e2e', {
    env: {
      CONSOLE_VERIFICATIONS_FILE: verifications,
      CONSOLE_VERIFICATION_INTERVAL_S: '600',
      ...(extras.registry ? { CONSOLE_REGISTRY_MIRRORS: `registry.example.com=${extras.registry.url}` } : {}),
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
