// Desired-state rendering with bad input: each case is a clear per-app error, never an empty render.
// Uses the real flux-render binary (Flux's kustomize library) and real tar.gz artifacts on loopback.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin } from '../../sandbox/sandbox.ts';
import { canonicalJson } from '../../src/domain/evidence.ts';
import {
  assertFetchableUrl,
  parseRendered,
  renderFlux,
  renderHash,
  type RenderTools,
} from '../../src/server/diff/render.ts';
import { maskSecrets } from '../../src/server/kube/secret-mask.ts';

const work = mkdtempSync(join(tmpdir(), 'render-test-'));
const files = new Map<string, Buffer>();
let server: Server;
let base = '';
const tools = (): RenderTools => ({
  fluxRender: bin('flux-render'),
  kustomize: bin('kustomize'),
  workDir: join(work, 'cache'),
  maxArtifactBytes: 5 * 1024 * 1024,
});

function artifact(name: string, tree: Record<string, string>): { url: string; digest: string } {
  const dir = join(work, 'src', name);
  for (const [f, c] of Object.entries(tree)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), c);
  }
  const tgz = join(work, `${name}.tar.gz`);
  execFileSync('tar', ['-czf', tgz, '-C', dir, '.']);
  const buf = readFileSync(tgz);
  files.set(`/${name}.tar.gz`, buf);
  return { url: `${base}/${name}.tar.gz`, digest: `sha256:${createHash('sha256').update(buf).digest('hex')}` };
}

const ks = (path: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'app', namespace: 'flux-system' },
  spec: { path, sourceRef: { kind: 'GitRepository', name: 'repo' }, ...extra },
});
const src = (a: { url: string; digest: string }) => ({
  kind: 'GitRepository',
  status: { artifact: { ...a, revision: 'main@sha1:abc' } },
});
const cm =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: ${LOG_LEVEL:=info}\n  region: ${REGION}\n';

beforeAll(async () => {
  server = createServer((req, res) => {
    const b = files.get(req.url ?? '');
    if (!b) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'application/gzip' }).end(b);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  // this artifact server (and the dead port the unreachable case names) are on loopback: allowed by host:port
  // through the Git URL policy, as an operator allow-lists an on-prem artifact server
  process.env.CONSOLE_GIT_ALLOW_HOSTS = [process.env.CONSOLE_GIT_ALLOW_HOSTS, new URL(base).host, '127.0.0.1:9']
    .filter(Boolean)
    .join(',');
});
afterAll(() => {
  server.close();
  rmSync(work, { recursive: true, force: true });
});

describe('renderFlux', () => {
  it('renders with Flux generator semantics: targetNamespace, images and postBuild substitution', async () => {
    const a = artifact('ok', {
      'app/deploy.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: "ghcr.io/x/web:1.0"}]}\n',
      'app/cm.yaml': cm,
    });
    const r = await renderFlux(
      ks('./app', {
        targetNamespace: 'qa',
        images: [{ name: 'ghcr.io/x/web', newTag: '2.0' }],
        postBuild: { substitute: { REGION: 'eu-west' } },
      }),
      src(a),
      tools(),
    );
    const byKind = Object.fromEntries(r.objects.map((o) => [o.kind as string, o]));
    expect((byKind.Deployment?.metadata as { namespace: string }).namespace).toBe('qa');
    expect(JSON.stringify(byKind.Deployment)).toContain('ghcr.io/x/web:2.0');
    expect(byKind.ConfigMap?.data).toEqual({ level: 'info', region: 'eu-west' });
    expect(r.renderer).toMatch(/^flux-render github.com\/fluxcd\/pkg\/kustomize@v/);
    expect(r.renderHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(r.artifactDigest).toBe(a.digest);
  });

  it('malformed YAML in Git: a render error naming the problem', async () => {
    const a = artifact('bad-yaml', {
      'app/x.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n  broken: [\n',
    });
    await expect(renderFlux(ks('./app'), src(a), tools())).rejects.toMatchObject({
      stage: 'render',
      message: expect.stringMatching(/yaml|YAML|mapping|flow/),
    });
  });

  it('a kustomization that fails to build: a render error, not an empty set', async () => {
    const a = artifact('bad-kust', { 'app/kustomization.yaml': 'resources:\n  - missing.yaml\n' });
    await expect(renderFlux(ks('./app'), src(a), tools())).rejects.toMatchObject({
      stage: 'render',
      message: expect.stringContaining('missing.yaml'),
    });
  });

  it('an unreachable artifact URL: a source error', async () => {
    const dead = { url: 'http://127.0.0.1:9/gone.tar.gz', digest: 'sha256:' + '0'.repeat(64) };
    await expect(renderFlux(ks('./app'), src(dead), tools())).rejects.toMatchObject({
      stage: 'source',
      message: expect.stringContaining('unreachable'),
    });
  });

  it('an artifact whose digest does not match its status: refused', async () => {
    const a = artifact('tampered', { 'app/cm.yaml': cm });
    await expect(
      renderFlux(ks('./app'), src({ ...a, digest: 'sha256:' + 'f'.repeat(64) }), tools()),
    ).rejects.toMatchObject({ stage: 'source', message: expect.stringContaining('digest mismatch') });
  });

  it('an oversized artifact (a 50 MB object in Git): refused quickly with bounded memory', async () => {
    const big = Buffer.alloc(50 * 1024 * 1024, 'a');
    files.set('/huge.tar.gz', big);
    const t = Date.now();
    await expect(
      renderFlux(
        ks('./app'),
        src({ url: `${base}/huge.tar.gz`, digest: `sha256:${createHash('sha256').update(big).digest('hex')}` }),
        tools(),
      ),
    ).rejects.toMatchObject({ stage: 'source', message: expect.stringContaining('limit') });
    expect(Date.now() - t).toBeLessThan(20_000);
  });

  it('a path that does not exist: a render error', async () => {
    const a = artifact('nopath', { 'app/cm.yaml': cm });
    await expect(renderFlux(ks('./nowhere'), src(a), tools())).rejects.toMatchObject({
      stage: 'render',
      message: expect.stringContaining('not found'),
    });
  });
});

describe('no secrets through side doors (real flux-render)', () => {
  const secret = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: hunter22\n';

  it('the render hash is the hash of the masked render, and the render cache is owner-only (0700/0600)', async () => {
    const previous = process.umask(0o022); // not main()'s umask(077): the modes are set explicitly
    try {
      const a = artifact('owner-only', { 'app/secret.yaml': secret, 'app/sub/cm.yaml': cm });
      const r = await renderFlux(ks('./app', { postBuild: { substitute: { REGION: 'eu' } } }), src(a), tools());
      const sorted = [...r.objects].sort((x, y) => String(x.kind).localeCompare(String(y.kind)));
      const plain = (objs: unknown[]) => `sha256:${createHash('sha256').update(canonicalJson(objs)).digest('hex')}`;
      expect(r.renderHash).toBe(renderHash(r.objects));
      expect(r.renderHash).not.toBe(plain(sorted));
      expect(r.renderHash).toBe(plain(sorted.map((o) => maskSecrets(o))));
      const loose: string[] = [];
      const walk = (p: string) => {
        const st = lstatSync(p);
        const want = st.isDirectory() ? 0o700 : 0o600;
        if ((st.mode & 0o777) !== want) loose.push(`${p} ${(st.mode & 0o777).toString(8)}`);
        if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
      };
      walk(tools().workDir);
      expect(readdirSync(join(tools().workDir, 'artifacts')).length).toBeGreaterThan(0);
      expect(loose).toEqual([]);
    } finally {
      process.umask(previous);
    }
  });

  it('a kustomize error quoting a secretGenerator literal: the value is masked', async () => {
    // kustomize: "invalid literal source <literal>, expected key=value"
    const a = artifact('bad-literal', {
      'app/kustomization.yaml': 'secretGenerator:\n  - name: api\n    literals:\n      - hunter22-no-key\n',
    });
    const e = await renderFlux(ks('./app'), src(a), tools()).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toMatchObject({ stage: 'render', message: expect.stringContaining('<secret ') });
    expect((e as Error).message).not.toContain('hunter22');
  });
});

describe('parsing limits and URL checks', () => {
  it('rejects a billion-laughs document quickly', () => {
    const lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++)
      lol.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    const doc = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n${lol.map((l) => `  ${l}`).join('\n')}\n`;
    const t = Date.now();
    expect(() => parseRendered(doc)).toThrow();
    expect(Date.now() - t).toBeLessThan(2000);
  });
  it.each([
    'file:///etc/passwd',
    'http://169.254.169.254/latest/meta-data/',
    'http://metadata.google.internal/',
    'gopher://x',
  ])('refuses %s', (u) => {
    expect(() => assertFetchableUrl(u)).toThrow(/refusing/);
  });
});
