#!/usr/bin/env node
// Bundles the BFF (src/server/serve.ts) into dist/server/console.mjs for the container image: TypeScript
// compiled away, npm packages left as imports (the image has `npm ci --omit=dev`), the sandbox left out
// (an image never starts the local sandbox: give it a kubeconfig or in-cluster access).
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;

await build({
  absWorkingDir: root,
  entryPoints: ['src/server/serve.ts'],
  outfile: 'dist/server/console.mjs',
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
console.log('dist/server/console.mjs');
