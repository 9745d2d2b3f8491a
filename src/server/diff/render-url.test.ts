// Renders fetch only what the one Git URL policy allows: a Flux artifact URL and an Argo CD repository at a
// loopback, private or metadata address are refused before any connection (a local server counts them), and
// allowed once the host is on CONSOLE_GIT_ALLOW_HOSTS.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureUrlPolicy } from '../git/url-policy.ts';
import { assertFetchableUrl, renderArgo, renderFlux, RenderError, type RenderTools } from './render.ts';

const work = mkdtempSync(join(tmpdir(), 'render-url-'));
const tools: RenderTools = { fluxRender: 'false', kustomize: 'false', workDir: join(work, 'cache'), timeoutMs: 10_000 };
const hits: IncomingMessage[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterEach(() => configureUrlPolicy(undefined));
afterAll(() => {
  server.close();
  rmSync(work, { recursive: true, force: true });
});

const ks = { apiVersion: 'kustomize.toolkit.fluxcd.io/v1', kind: 'Kustomization', spec: { path: './' } };
const source = (url: string) => ({ kind: 'GitRepository', status: { artifact: { url, revision: 'main@sha1:abc' } } });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as RenderError,
  );

describe('Flux artifact downloads', () => {
  it('refuse a loopback artifact server that is not allow-listed, before connecting', async () => {
    configureUrlPolicy({ allowHosts: [], allowSsh: false });
    const e = await failure(renderFlux(ks, source(`${base}/a.tar.gz`), tools));
    expect(e).toBeInstanceOf(RenderError);
    expect(e).toMatchObject({ stage: 'source' });
    expect(e?.message).toMatch(/refusing 127\.0\.0\.1: a loopback address \(not in CONSOLE_GIT_ALLOW_HOSTS\)/);
    expect(hits.filter((h) => h.url === '/a.tar.gz')).toHaveLength(0);
  });

  it('fetch from an allow-listed artifact server', async () => {
    configureUrlPolicy({ allowHosts: [new URL(base).host], allowSsh: false });
    const e = await failure(renderFlux(ks, source(`${base}/b.tar.gz`), tools));
    expect(e?.message).toMatch(/HTTP 404/);
    expect(hits.filter((h) => h.url === '/b.tar.gz')).toHaveLength(1);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/a.tar.gz',
    'http://0xa9.0xfe.0xa9.0xfe/a.tar.gz',
    'http://10.0.0.1/a.tar.gz',
    'file:///etc/passwd',
  ])('refuse %s synchronously', (url) => {
    expect(() => assertFetchableUrl(url)).toThrow(/^refusing /);
  });
});

describe('Argo CD repository fetches', () => {
  it('refuse a loopback repository that is not allow-listed, before git connects', async () => {
    configureUrlPolicy({ allowHosts: [], allowSsh: false });
    const e = await failure(renderArgo(`${base}/o/r.git`, 'main', '.', undefined, tools));
    expect(e).toMatchObject({ stage: 'source' });
    expect(e?.message).toMatch(/refusing 127\.0\.0\.1: a loopback address/);
    expect(hits.filter((h) => h.url?.startsWith('/o/r.git'))).toHaveLength(0);
  });

  it.each(['ssh://git@git.example.com/o/r.git', 'git://git.example.com/o/r.git', 'http://2852039166/o/r.git'])(
    'refuse %s',
    async (url) => {
      configureUrlPolicy({ allowHosts: [], allowSsh: false });
      expect((await failure(renderArgo(url, 'main', '.', undefined, tools)))?.message).toMatch(/^refusing /);
    },
  );

  it('fetch from an allow-listed repository', async () => {
    configureUrlPolicy({ allowHosts: ['127.0.0.1'], allowSsh: false });
    const e = await failure(renderArgo(`${base}/o/r.git`, 'main', '.', undefined, tools));
    expect(e?.message).toMatch(/git fetch main failed/);
    expect(hits.filter((h) => h.url?.startsWith('/o/r.git/info/refs'))).not.toHaveLength(0);
  });
});
