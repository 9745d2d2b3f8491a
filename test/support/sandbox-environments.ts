// The console's environment mapping for the sandbox's clusters, as consoles started by tests are configured:
// a test estate's namespace `t-<env>-…` (./own-estate.ts) is that environment, then nonprod/dev=dev,
// nonprod/staging=staging, prod/*=prod (src/server/sandbox-environments.ts).
import { DEFAULT_CLUSTERS } from '../../sandbox/sandbox.ts';
import { sandboxEnvironments } from '../../src/server/sandbox-environments.ts';

const ESTATE_RULES = ['nonprod/t-dev-*=dev', 'nonprod/t-staging-*=staging', 'prod/t-prod-*=prod'];

export const SANDBOX_ENVIRONMENTS_ENV = {
  CONSOLE_ENVIRONMENTS: [...ESTATE_RULES, sandboxEnvironments(DEFAULT_CLUSTERS)].join('\n'),
} as const;
