// The SPA's files as a browser gets them: precompressed by negotiation, hashed assets immutable for a year,
// index.html (and the SPA fallback to it) revalidated on every visit.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precompress } from '../../../scripts/precompress.ts';
import { IMMUTABLE, isHashedAsset, registerStatic, REVALIDATE } from './static-assets.ts';

let dir: string;
let app: FastifyInstance;
const js = `export const x = ${JSON.stringify('console '.repeat(400))};\n`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'static-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), `<!doctype html><title>c</title>${'<p>shell</p>'.repeat(200)}`);
  writeFileSync(join(dir, 'assets', 'index-DhOs3IQ1.js'), js);
  writeFileSync(join(dir, 'favicon.svg'), '<svg/>');
  expect(precompress(dir)).toBe(2); // index.html and the script; the tiny svg is not worth it
  app = Fastify();
  await registerStatic(app, dir);
  app.setNotFoundHandler((_req, rep) => rep.type('text/html').sendFile('index.html'));
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (url: string, enc?: string) =>
  app.inject({ method: 'GET', url, headers: enc ? { 'accept-encoding': enc } : {} });

describe('static assets', () => {
  it('brotli when accepted, else gzip, else as is — the same bytes each time', async () => {
    const br = await get('/assets/index-DhOs3IQ1.js', 'gzip, deflate, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(js);
    expect(br.rawPayload.length).toBeLessThan(js.length / 5);
    const gz = await get('/assets/index-DhOs3IQ1.js', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(js);
    const plain = await get('/assets/index-DhOs3IQ1.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(js);
    expect(plain.headers['content-type']).toMatch(/javascript/);
  });

  it('a hashed asset is immutable for a year; index.html, the SPA fallback and unhashed files are revalidated', async () => {
    expect((await get('/assets/index-DhOs3IQ1.js', 'br')).headers['cache-control']).toBe(IMMUTABLE);
    const index = await get('/', 'br');
    expect(index.headers['cache-control']).toBe(REVALIDATE);
    expect(index.headers['content-type']).toMatch(/text\/html/);
    expect(brotliDecompressSync(index.rawPayload).toString()).toBe(readFileSync(join(dir, 'index.html'), 'utf8'));
    const spa = await get('/apps/nonprod/argocd/application/web-dev', 'gzip');
    expect(spa.statusCode).toBe(200);
    expect(spa.headers['cache-control']).toBe(REVALIDATE);
    expect((await get('/favicon.svg')).headers['cache-control']).toBe(REVALIDATE);
  });

  it('only a content-hashed name under assets/ counts as immutable', () => {
    expect(isHashedAsset('/r', '/r/assets/index-DhOs3IQ1.js.br')).toBe(true);
    expect(isHashedAsset('/r', '/r/assets/readme.js')).toBe(false);
    expect(isHashedAsset('/r', '/r/index-DhOs3IQ1.js')).toBe(false);
  });
});
