import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

/**
 * Integration files that cannot run beside others (docs/develop/testing.md): they stop a component, change what every
 * app shares, or still change the seed estate. They run one at a time, after the file-parallel tier. Every other
 * integration file owns its state (test/support/own-estate.ts) or only reads, and runs in parallel. A file leaves
 * this list when it owns its state; the reason says what keeps it here.
 */
export const GLOBAL_FILES: Record<string, string> = {
  'argocd-appset': 'stops the forge; shrinks the seed ApplicationSet',
  bff: 'stops the prod apiserver; exact seed app lists',
  'chaos-matrix': "stops the nonprod apiserver, the forge, its replicas' PostgreSQL (test/chaos/)",
  forge: 'stops the forge; merges into the seed repo',
  informer: 'compacts etcd, stops the nonprod apiserver',
  'prune-approval-scope':
    "asserts exact identity changes of the cluster's one approvals list, which every console sweeps",
  registry: 'stops the registry; moves seed image tags; sets every business endpoint',
  rollback: 'stops the forge; seed dev releases',
  sandbox: 'stops the prod apiserver; edits seed dev',
  'sandbox-mode': 're-applies the sandbox (reuse) like a Try-it console',
  tryit: "stops prod's apiserver (Take a cluster offline); its sandbox-mode console re-applies the sandbox",
  // wall-clock judges
  'freeze-claims': "judges replicas' claim takeovers (3 s claims) by wall-clock windows",
  'freeze-expiry': 'a 5 s freeze that must expire while its consoles are down: judged by wall-clock',
};
const globalFiles = Object.keys(GLOBAL_FILES).map((f) => `test/integration/${f}.test.ts`);

const integration = {
  environment: 'node' as const,
  globalSetup: ['test/integration/global-setup.ts'],
  setupFiles: ['test/support/restore-env.ts'],
  testTimeout: 240_000,
  hookTimeout: 600_000,
  pool: 'forks' as const,
  // a worker process runs file after file and imports the BFF once, not once per file: the integration tier's test
  // processes used 544 core-s instead of 794 (docs/develop/testing.md, "Isolation"). A file owns its state in the cluster,
  // and in the process it leaves nothing behind that another file reads (its consoles closed in afterAll)
  isolate: false,
};

/**
 * The contract tier (docs/develop/testing.md): the BFF against one bare cluster (sandbox/bare-cluster.ts: etcd and the
 * apiservers, no controllers, no forge), started once per run by its global set-up; needs no sandbox.
 */
const contract = {
  environment: 'node' as const,
  globalSetup: ['test/contract/global-setup.ts'],
  setupFiles: ['test/support/restore-env.ts', 'test/contract/setup-env.ts'],
  testTimeout: 120_000,
  // a set-up that starts a BFF process (tsx transpiles the server) niced beside the integration tier: up to 240 s
  hookTimeout: 420_000,
  pool: 'forks' as const,
  // as integration: one import of the BFF per worker process, not per file
  isolate: false,
};

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [react()],
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/unit/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['test/support/restore-env.ts', 'test/unit/setup-dom.ts'],
          // npm test runs unit niced beside the sandbox and the integration tier (load ~10 on two cores): vitest's
          // 5 s default timed out four kustomize renders there (2026-12-05); a hung test still fails, at 20 s
          testTimeout: 20_000,
          // one worker process runs many files, each importing its modules once: 77 core-s instead of 198 for the
          // tier (docs/develop/testing.md, "Isolation"). Every file passed in two shuffled file orders
          // (--sequence.shuffle.files); a file that needs a fresh module state resets it in its own hooks
          isolate: false,
        },
      },
      {
        test: {
          ...integration,
          name: 'integration',
          // writeback-scope's rendered cases need the sandbox's real kustomize, and render-server's the real
          // flux-render, which a fresh machine builds only after the unit step (where they are skipped, with a
          // warning): they run here again, with them
          include: [
            'test/integration/**/*.test.ts',
            'src/domain/writeback-scope.test.ts',
            'src/server/diff/render-server.test.ts',
          ],
          exclude: globalFiles,
          fileParallelism: true,
        },
      },
      {
        test: { ...integration, name: 'global', include: globalFiles, fileParallelism: false },
      },
      {
        test: {
          ...contract,
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          fileParallelism: true,
        },
      },
    ],
  },
});
