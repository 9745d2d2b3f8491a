// The BFF and its CLI bundled to plain JavaScript, as the container image runs them: TypeScript compiled away, npm
// packages left as imports (resolved from the node_modules above the output), the sandbox left out (an image never
// starts the local sandbox: give it a kubeconfig or in-cluster access). Used by scripts/build-server.mjs (the
// image's dist/server) and by the tests that spawn a console or the CLI (test/support/server-bundle.ts), so that
// those run what ships.
import { build } from 'esbuild';

/** The entry points: the console (src/server/serve.ts) and the CLI (src/server/cli/main.ts). */
export const SERVER_ENTRIES = { console: 'src/server/serve.ts', cli: 'src/server/cli/main.ts' };

/**
 * Bundles both entries into `outdir` (absolute, or relative to `root`): `console.mjs` and `cli.mjs`, each with its
 * source map. `outdir` must be inside the repository: the bundles import the packages of its node_modules.
 */
export async function bundleServer(root, outdir) {
  await build({
    absWorkingDir: root,
    entryPoints: SERVER_ENTRIES,
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [
      {
        name: 'no-sandbox',
        setup(b) {
          b.onResolve({ filter: /\/sandbox\/sandbox\.ts$/ }, (a) => ({ path: a.path, external: true }));
        },
      },
    ],
  });
}
