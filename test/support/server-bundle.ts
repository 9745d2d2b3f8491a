// The console and the CLI as the container image runs them (scripts/server-bundle.mjs): plain JavaScript that
// `node` starts without a TypeScript loader. Tests that spawn a console or the CLI run these: what ships, and
// cheaper to start (tsx transpiles the whole server at each start: docs/develop/testing.md, "Spawned consoles").
// Bundled once per test process from the working tree (so never stale), into a folder of its own under dist/
// (the bundles import the repository's node_modules), removed when the process exits.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleServer } from '../../scripts/server-bundle.mjs';
import { REPO_ROOT } from '../../sandbox/sandbox.ts';

export interface ServerBundle {
  /** the bundled console (src/server/serve.ts) */
  console: string;
  /** the bundled CLI (src/server/cli/main.ts) */
  cli: string;
  /** node's arguments that start the console with `args`, source maps on as in the image (Dockerfile's CMD) */
  consoleArgs(...args: string[]): string[];
  /** node's arguments that run the CLI with `args` */
  cliArgs(...args: string[]): string[];
}

let built: Promise<ServerBundle> | undefined;

export function serverBundle(): Promise<ServerBundle> {
  built ??= (async () => {
    const dir = join(REPO_ROOT, 'dist', 'test-server', String(process.pid));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await bundleServer(REPO_ROOT, dir);
    const console = join(dir, 'console.mjs');
    const cli = join(dir, 'cli.mjs');
    return {
      console,
      cli,
      consoleArgs: (...args) => ['--enable-source-maps', console, ...args],
      cliArgs: (...args) => ['--enable-source-maps', cli, ...args],
    };
  })();
  return built;
}
