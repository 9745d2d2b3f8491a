// Precompressed copies of the SPA's text assets (issue 27): `<file>.br` (brotli) and `<file>.gz` (gzip) beside each
// file of dist/web worth compressing, written once at build time so the BFF serves them by negotiation
// (@fastify/static `preCompressed`) without compressing per request. Used by vite.config.ts after the bundle is
// written; also runnable by hand: `npx tsx scripts/precompress.ts dist/web`.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const TEXT = /\.(js|mjs|css|html|svg|json|ttf|txt|map)$/;

/** Writes .br and .gz beside every text file over 1 KiB under `dir`; returns how many files it compressed. */
export function precompress(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) {
      n += precompress(p);
      continue;
    }
    if (!TEXT.test(name) || st.size < 1024) continue;
    const raw = readFileSync(p);
    // the best brotli level for what the first page loads; level 9 for the multi-megabyte editor (11 costs
    // seconds per megabyte on this 2-core machine for a few per cent)
    const quality = raw.length > 1_000_000 ? 9 : 11;
    writeFileSync(
      `${p}.br`,
      brotliCompressSync(raw, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: quality,
          [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
        },
      }),
    );
    writeFileSync(`${p}.gz`, gzipSync(raw, { level: 9 }));
    n++;
  }
  return n;
}

if (process.argv[1]?.endsWith('precompress.ts') && process.argv[2]) {
  console.log(`precompressed ${precompress(process.argv[2])} files under ${process.argv[2]}`);
}
