// flux-render's server mode (render-server.ts, sandbox/go/flux-render/serve.go) against its one-shot command, with
// the sandbox's real binary: the same bytes for the seed's overlays; a tree with its own OpenAPI schema between two
// without one changes nothing of theirs (the schema that changes its merge does not reach the next build); errors
// are the one-shot's; a process killed mid-way fails its request and the next request works. Runs in the unit tier
// when the binary is built, and again in the integration tier (after the sandbox's build), like writeback-scope.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seedFiles } from '../../../sandbox/seed.ts';
import { SANDBOX_DIR } from '../../../sandbox/state.ts';
import { RenderServerError, RenderServerPool } from './render-server.ts';

const BIN = join(SANDBOX_DIR, 'bin', 'flux-render');
const hasBin = existsSync(BIN);
if (!hasBin) console.warn(`render-server: ${BIN} is absent (build the sandbox once); skipping`);

const work = mkdtempSync(join(tmpdir(), 'render-server-'));
// the copies (about 1,300 files) are removed without blocking, with time to spare: npm test runs this tier niced beside
// the integration tier, where a synchronous removal here once outlasted the 10 s hook timeout
afterAll(() => rm(work, { recursive: true, force: true }), 120_000);

function tree(name: string, files: Record<string, string>): string {
  const dir = join(work, 'src', name);
  for (const [f, c] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), c);
  }
  return dir;
}
let copies = 0;
/** a fresh copy of a tree (a render writes its generated kustomization.yaml into it, as in renderFlux) */
const copy = (dir: string) => {
  const to = join(work, `w${copies++}`);
  cpSync(dir, to, { recursive: true });
  return to;
};
function ksFile(path: string, extra: Record<string, unknown> = {}): string {
  const f = join(work, `ks-${copies++}.json`);
  writeFileSync(
    f,
    JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'app', namespace: 'flux-system' },
      spec: { path, prune: true, ...extra },
    }),
  );
  return f;
}
const oneShot = (root: string, path: string, ks: string) =>
  spawnSync(BIN, ['--root', root, '--path', path, '--kustomization', ks], { encoding: 'utf8' });

// a custom resource whose list a strategic-merge patch merges by name under the tree's own schema, and replaces
// without it
const CR = 'apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - name: a\n';
const PATCH = 'apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - name: b\n';
const SCHEMA = JSON.stringify({
  definitions: {
    'v1alpha1.Widget': {
      type: 'object',
      'x-kubernetes-group-version-kind': [{ group: 'example.com', kind: 'Widget', version: 'v1alpha1' }],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object' },
        spec: {
          type: 'object',
          properties: {
            items: {
              type: 'array',
              items: { $ref: '#/definitions/v1alpha1.Item' },
              'x-kubernetes-patch-merge-key': 'name',
              'x-kubernetes-patch-strategy': 'merge',
            },
          },
        },
      },
    },
    'v1alpha1.Item': { type: 'object', properties: { name: { type: 'string' } } },
  },
});
const widgetTree = (own: boolean) =>
  tree(own ? 'own-schema' : 'no-schema', {
    'app/kustomization.yaml':
      (own ? 'openapi:\n  path: schema.json\n' : '') + 'resources:\n- cr.yaml\npatches:\n- path: patch.yaml\n',
    'app/cr.yaml': CR,
    'app/patch.yaml': PATCH,
    ...(own ? { 'app/schema.json': SCHEMA } : {}),
  });

/** one request at a time in these tests: a render handed to the one-shot path would be a failure */
const noOverflow = () => Promise.reject(new Error('the pool handed a render back'));

describe.skipIf(!hasBin)('flux-render in server mode', () => {
  const pool = new RenderServerPool(BIN, 1);
  const opts = { timeoutMs: 60_000, maxBytes: 64 << 20 };
  afterAll(() => pool.close(), 60_000);

  it("renders the seed's overlays byte for byte as the one-shot command, request after request", async () => {
    const seed = tree('seed', seedFiles());
    for (const round of [1, 2])
      for (const env of ['dev', 'staging', 'prod']) {
        const ks = ksFile(`./overlays/${env}`, { postBuild: { substitute: { cluster_env: env } } });
        const want = oneShot(copy(seed), `./overlays/${env}`, ks);
        expect(want.status, want.stderr).toBe(0);
        const got = await pool.render(
          { root: copy(seed), path: `./overlays/${env}`, kustomization: ks },
          opts,
          noOverflow,
        );
        expect(got, `${env}, round ${round}`).toBe(want.stdout);
        expect(got).toContain('kind: Deployment');
      }
  }, 120_000);

  it("keeps a tree's own OpenAPI schema to its build: the next tree renders as a fresh process would", async () => {
    const own = widgetTree(true);
    const plain = widgetTree(false);
    const ks = ksFile('./app');
    const ownWant = oneShot(copy(own), './app', ks).stdout;
    const plainWant = oneShot(copy(plain), './app', ks).stdout;
    // the schema matters: merged by name with it, replaced without
    expect(ownWant).toMatch(/- name: b\n\s+- name: a/);
    expect(plainWant).not.toContain('name: a');
    for (const [root, want] of [
      [plain, plainWant],
      [own, ownWant],
      [plain, plainWant],
      [own, ownWant],
      [plain, plainWant],
    ] as const)
      expect(await pool.render({ root: copy(root), path: './app', kustomization: ks }, opts, noOverflow)).toBe(want);
  }, 120_000);

  it('fails as the one-shot command does, and the same process renders the next request', async () => {
    const seed = tree('seed-err', seedFiles());
    const ks = ksFile('./overlays/nowhere');
    const want = oneShot(copy(seed), './overlays/nowhere', ks);
    expect(want.status).toBe(1);
    const e = await pool
      .render({ root: copy(seed), path: './overlays/nowhere', kustomization: ks }, opts, noOverflow)
      .catch((x) => x);
    expect(e).toBeInstanceOf(RenderServerError);
    expect((e as Error).message).toBe(want.stderr.trim());
    const good = ksFile('./overlays/dev');
    expect(await pool.render({ root: copy(seed), path: './overlays/dev', kustomization: good }, opts, noOverflow)).toBe(
      oneShot(copy(seed), './overlays/dev', good).stdout,
    );
  }, 120_000);

  it('a process past its deadline is killed: its request fails, and the next one starts a new process', async () => {
    const seed = tree('seed-kill', seedFiles());
    const ks = ksFile('./overlays/dev');
    const e = await pool
      .render(
        { root: copy(seed), path: './overlays/dev', kustomization: ks },
        { timeoutMs: 1, maxBytes: 64 << 20 },
        noOverflow,
      )
      .catch((x) => x);
    expect(e).toBeInstanceOf(RenderServerError);
    expect((e as Error).message).toMatch(/did not answer within 1 ms/);
    expect(await pool.render({ root: copy(seed), path: './overlays/dev', kustomization: ks }, opts, noOverflow)).toBe(
      oneShot(copy(seed), './overlays/dev', ks).stdout,
    );
  }, 120_000);

  it('a render that finds every process busy is handed to the one-shot path at once, never queued', async () => {
    const seed = tree('seed-busy', seedFiles());
    const ks = ksFile('./overlays/dev');
    const want = oneShot(copy(seed), './overlays/dev', ks).stdout;
    const before = { ...pool.stats };
    let handedBack = 0;
    const overflow = () => {
      handedBack++;
      return Promise.resolve(oneShot(copy(seed), './overlays/dev', ks).stdout);
    };
    // the first takes the pool's one process; the second starts while it runs
    const first = pool.render({ root: copy(seed), path: './overlays/dev', kustomization: ks }, opts, overflow);
    const second = pool.render({ root: copy(seed), path: './overlays/dev', kustomization: ks }, opts, overflow);
    expect(await Promise.all([first, second])).toEqual([want, want]);
    expect(handedBack).toBe(1);
    expect(pool.stats.served - before.served).toBe(1);
    expect(pool.stats.overflow - before.overflow).toBe(1);
    // with the process free again, the next one is served by it
    expect(await pool.render({ root: copy(seed), path: './overlays/dev', kustomization: ks }, opts, overflow)).toBe(
      want,
    );
    expect(handedBack).toBe(1);
  }, 120_000);

  it('tells of a render slower than its threshold, by path and duration', async () => {
    const seen: Array<[string, number]> = [];
    const eager = new RenderServerPool(BIN, 1, (req, ms) => seen.push([req.path, ms]), 0);
    try {
      const seed = tree('seed-slow', seedFiles());
      const ks = ksFile('./overlays/staging');
      await eager.render({ root: copy(seed), path: './overlays/staging', kustomization: ks }, opts, noOverflow);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.[0]).toBe('./overlays/staging');
      expect(seen[0]?.[1]).toBeGreaterThan(0);
      expect(eager.stats).toEqual({ served: 1, overflow: 0, slow: 1 });
    } finally {
      eager.close();
    }
  }, 120_000);
});
