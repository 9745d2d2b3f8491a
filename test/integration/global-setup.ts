// Integration tests share one real sandbox (started here, or reused when
// scripts/test.mjs already started it). The BFF under test runs as the console's own identity
// (test/support/kubeconfig.ts); the sandbox re-applies deploy/rbac.yaml as shipped on every start/reuse.
import { readState, sandboxStatus, startSandbox, stopSandbox } from '../../sandbox/sandbox.ts';
import { sandboxGitHosts } from '../../src/server/sandbox-git-hosts.ts';
import { assertBffIdentityIsLeastPrivilege } from '../support/kubeconfig.ts';

export default async function setup(): Promise<() => Promise<void>> {
  const managed = process.env.GITOPS_SANDBOX_MANAGED === '1';
  // a sandbox that was already running belongs to whoever started it: reuse it, never stop it
  const before = readState();
  const wasRunning = !!before && (await sandboxStatus(before)).every((c) => c.ok);
  const st = await startSandbox({ reuse: true });
  await assertBffIdentityIsLeastPrivilege(st.clusters.map((c) => c.name));
  // tests that render or call the forge in-process pass the Git URL policy for the sandbox's own loopback Git
  // endpoints (host and port), exactly as the console in sandbox mode does; forked test files inherit it
  process.env.CONSOLE_GIT_ALLOW_HOSTS ??= sandboxGitHosts(st).join(',');
  return async () => {
    if (!managed && !wasRunning && process.env.SANDBOX_KEEP !== '1') await stopSandbox();
  };
}
