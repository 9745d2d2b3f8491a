// The shell's weight (issue 27): what the first page load fetches before anything renders — index.html, its entry
// script, the chunks it preloads and its stylesheet — raw, gzip and brotli (the precompressed copies the BFF
// serves: scripts/precompress.ts), against the budget of 120 KB compressed. Run after `vite build`:
//   npm run bench:assets
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? 'dist/web';
const BUDGET_KB = 120;
const index = join(root, 'index.html');
if (!existsSync(index)) {
  console.error(`no ${index}: run \`npx vite build\` first`);
  process.exit(2);
}
const html = readFileSync(index, 'utf8');
const files = [
  'index.html',
  ...[...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] as string),
];
const size = (p: string) => (existsSync(p) ? statSync(p).size : NaN);
let raw = 0;
let gz = 0;
let br = 0;
console.log('file                                         raw KB    gzip KB  brotli KB');
for (const f of files) {
  const p = join(root, f);
  const r = size(p);
  const g = existsSync(`${p}.gz`) ? size(`${p}.gz`) : r;
  const b = existsSync(`${p}.br`) ? size(`${p}.br`) : r;
  raw += r;
  gz += g;
  br += b;
  console.log(
    `${f.padEnd(44)} ${(r / 1024).toFixed(1).padStart(7)} ${(g / 1024).toFixed(1).padStart(10)} ${(b / 1024).toFixed(1).padStart(10)}`,
  );
}
console.log(
  `${'shell total'.padEnd(44)} ${(raw / 1024).toFixed(1).padStart(7)} ${(gz / 1024).toFixed(1).padStart(10)} ${(br / 1024).toFixed(1).padStart(10)}`,
);
console.log(`brotli / raw: ${(br / raw).toFixed(3)}; gzip / raw: ${(gz / raw).toFixed(3)}`);
const met = br / 1024 < BUDGET_KB;
console.log(
  `shell budget < ${BUDGET_KB} KB compressed (brotli): ${(br / 1024).toFixed(1)} KB — ${met ? 'met' : 'NOT MET'}`,
);
