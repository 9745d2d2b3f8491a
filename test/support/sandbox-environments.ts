// The console's environment mapping for the sandbox's clusters, as consoles started by tests are configured:
// nonprod/dev=dev, nonprod/staging=staging, prod/*=prod (src/server/sandbox-environments.ts).
import { DEFAULT_CLUSTERS } from '../../sandbox/sandbox.ts';
import { sandboxEnvironments } from '../../src/server/sandbox-environments.ts';

export const SANDBOX_ENVIRONMENTS_ENV = { CONSOLE_ENVIRONMENTS: sandboxEnvironments(DEFAULT_CLUSTERS) } as const;
