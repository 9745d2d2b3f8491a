// The sandbox's own scenario helpers (sandbox/scenario.ts, sandbox/scenario-forge.ts, sandbox/sandbox.ts), as
// the "Try it" scenarios use them. Loaded ONLY in sandbox mode, by a dynamic import (loadSandboxKit, called by
// main.ts when cfg.sandbox): a production build never loads sandbox code. They act with the sandbox's admin
// kubeconfig and the forge admin — right for scenario helpers (they stand for the people and controllers of a
// story); the console itself keeps its least-privilege identity.
type Scenario = typeof import('../../../sandbox/scenario.ts');
type Sandbox = typeof import('../../../sandbox/sandbox.ts');
type Seed = typeof import('../../../sandbox/seed.ts');

/** What the scenarios and the reset call: every name is an existing sandbox helper. */
export interface SandboxKit {
  scenario: Pick<
    Scenario,
    | 'kubectlScale'
    | 'removeFromGit'
    | 'makeRenderEmpty'
    | 'incidentEditRenderWorker'
    | 'setBusinessEndpoint'
    | 'commitAndPushRetrying'
    | 'writeRepoFile'
    | 'moveImageTag'
    | 'pushNewImage'
    | 'waitForKustomizationRevision'
    | 'requestReconcile'
    | 'getJson'
    | 'forgeApi'
    | 'sandboxForge'
    | 'closePullRequest'
  >;
  sandbox: Pick<Sandbox, 'stopApiserver' | 'startApiserver' | 'mustState'>;
  seed: Pick<Seed, 'seedFiles'>;
}

/** The sandbox's helpers, imported now (sandbox mode only). */
export async function loadSandboxKit(): Promise<SandboxKit> {
  const [scenario, sandbox, seed] = await Promise.all([
    import('../../../sandbox/scenario.ts'),
    import('../../../sandbox/sandbox.ts'),
    import('../../../sandbox/seed.ts'),
  ]);
  return { scenario, sandbox, seed };
}
