// The production entry point (the container image): scripts/build-server.mjs bundles the BFF from here into
// dist/server/console.mjs, which plain `node` runs (no TypeScript loader at run time). `npm start` and
// `npm run bff` keep running src/server/main.ts through tsx.
import { main } from './main.ts';

void main();
