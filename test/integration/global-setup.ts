// Integration tests share one real sandbox (started here, or reused when
// scripts/test.mjs already started it).
import { startSandbox, stopSandbox } from '../../sandbox/sandbox.ts';

export default async function setup(): Promise<() => Promise<void>> {
  const managed = process.env.GITOPS_SANDBOX_MANAGED === '1';
  await startSandbox({ reuse: true });
  return async () => {
    if (!managed && process.env.SANDBOX_KEEP !== '1') await stopSandbox();
  };
}
