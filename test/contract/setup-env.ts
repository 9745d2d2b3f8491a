// Runs in each contract test file's process before the file's imports: the sandbox helpers read
// GITOPS_SANDBOX_DIR when first imported (sandbox/state.ts), so they find the bare cluster of ./global-setup.ts
// (its state file, kubeconfigs and the sandbox's binaries through its bin/ link). Processes the tests spawn
// (a BFF, the CLI) inherit the same.
import { inject } from 'vitest';

const c = inject('contract');
process.env.GITOPS_SANDBOX_DIR = c.dir;
process.env.CONSOLE_TEST_KUBECONFIG = c.consoleKubeconfig;
// anything reading KUBECONFIG without being given one gets the console's identity, never an admin's
process.env.KUBECONFIG = c.consoleKubeconfig;
// the Git URL policy for the consoles under test: loopback only, as test/support/bff-process.ts SANDBOX_GIT_ENV
process.env.CONSOLE_GIT_ALLOW_HOSTS = '127.0.0.1';
