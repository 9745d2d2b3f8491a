// The "Try it" capability's public face (sandbox mode only): the root loads the sandbox's scenario helpers with
// loadSandboxKit() when cfg.sandbox and passes them as deps.tryit; without them the routes (routes.ts,
// registered by app.ts) are not registered and /api/tryit answers 404.
export { loadSandboxKit, type SandboxKit } from './kit.ts';
export { TryItService, SCENARIO_ACTOR } from './service.ts';
