/** The entry points: the console (src/server/serve.ts) and the CLI (src/server/cli/main.ts). */
export declare const SERVER_ENTRIES: { console: string; cli: string };
/** Bundles both entries into `outdir`: `console.mjs` and `cli.mjs` (scripts/server-bundle.mjs). */
export declare function bundleServer(root: string, outdir: string): Promise<void>;
