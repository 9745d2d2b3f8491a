#!/usr/bin/env node
// Bundles the BFF (src/server/serve.ts) into dist/server/console.mjs and its CLI (src/server/cli/main.ts) into
// dist/server/cli.mjs for the container image (scripts/server-bundle.mjs says how).
import { bundleServer } from './server-bundle.mjs';

const root = new URL('..', import.meta.url).pathname;
await bundleServer(root, 'dist/server');
console.log('dist/server/console.mjs dist/server/cli.mjs');
