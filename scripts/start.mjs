#!/usr/bin/env node
// npm start: build the SPA, then run the BFF serving it. With no kubeconfig
// (neither KUBECONFIG nor ~/.kube/config) or with --sandbox, the BFF starts
// the local sandbox clusters and connects to them.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const built = join(root, 'dist/web/index.html');
if (!existsSync(built) || statSync(built).mtimeMs < newest(join(root, 'src/web')) || args.includes('--rebuild')) {
  console.log('building the SPA…');
  const r = spawnSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const child = spawn(
  process.execPath,
  ['--import', 'tsx', join(root, 'src/server/main.ts'), ...args.filter((a) => a !== '--rebuild')],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CONSOLE_STATIC_DIR: join(root, 'dist/web') },
  },
);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
