// The SPA's files (issue 27): served precompressed by negotiation (brotli, then gzip, then as is: the .br/.gz
// copies scripts/precompress.ts writes at build time), content-hashed files under /assets/ cached for a year as
// immutable (a new build has new names), everything else — index.html above all, which names the current hashes —
// `no-cache` (revalidated on every visit, so a deploy is seen at once).
import { basename, relative, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

/** A build output file whose name carries its content hash (Vite: `name-<8 base64url chars>.<ext>` in assets/). */
export function isHashedAsset(root: string, path: string): boolean {
  const rel = relative(root, path).split(sep);
  const name = basename(path).replace(/\.(br|gz)$/, '');
  return rel[0] === 'assets' && /-[A-Za-z0-9_-]{8}\.[a-z0-9]+$/.test(name);
}

export async function registerStatic(app: FastifyInstance, root: string): Promise<void> {
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    preCompressed: true,
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('Cache-Control', isHashedAsset(root, path) ? IMMUTABLE : REVALIDATE);
    },
  });
}
