// No secrets through side doors: the render hash, render error text and the render cache on disk.
// Real code paths: a real tar.gz artifact on loopback, downloaded and extracted by renderFlux, rendered by a
// stand-in for flux-render (a shell script that prints a file of the tree, or fails quoting one).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import { canonicalJson } from '../../domain/evidence.ts';
import { Accounts } from '../auth/accounts.ts';
import { KubeError, type ClusterConnection } from '../kube/connection.ts';
import type { Discovery } from '../kube/discovery.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { diffApp, type DiffDeps } from './app-diff.ts';
import { renderFlux, renderHash, RenderError, type Obj, type RenderTools } from './render.ts';
import { loadMaskKey, maskSecrets, maskValue } from '../kube/secret-mask.ts';

const work = mkdtempSync(join(tmpdir(), 'render-secrets-'));
const files = new Map<string, Buffer>();
let server: Server;
let base = '';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

// stands in for flux-render (`--root R --path P --kustomization F`): prints P/error.txt to stderr and
// fails when there is one, else prints P/render.yaml
const fakeRender = join(work, 'fake-flux-render');
writeFileSync(
  fakeRender,
  '#!/bin/sh\n[ "$1" = --version ] && { echo fake-render; exit 0; }\n' +
    'if [ -f "$2/$4/error.txt" ]; then cat "$2/$4/error.txt" >&2; exit 1; fi\ncat "$2/$4/render.yaml"\n',
);
chmodSync(fakeRender, 0o755);
const tools = (dataDir = join(work, 'data')): RenderTools => ({
  fluxRender: fakeRender,
  kustomize: 'false',
  workDir: join(dataDir, 'render-cache'),
});

function artifact(name: string, tree: Record<string, string>): Obj {
  const dir = join(work, 'src', name);
  for (const [f, c] of Object.entries(tree)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), c);
  }
  const tgz = join(work, `${name}.tar.gz`);
  execFileSync('tar', ['-czf', tgz, '-C', dir, '.']);
  const buf = readFileSync(tgz);
  files.set(`/${name}.tar.gz`, buf);
  const digest = `sha256:${createHash('sha256').update(buf).digest('hex')}`;
  return { kind: 'GitRepository', status: { artifact: { url: `${base}/${name}.tar.gz`, digest, revision: 'main@x' } } };
}
const ks: Obj = {
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'app', namespace: 'flux-system' },
  spec: { path: './app', sourceRef: { kind: 'GitRepository', name: 'repo' } },
};
const secretYaml = (password: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: app\nstringData:\n  password: ${password}\n` +
  `data:\n  token: ${b64('tok-12345')}\n`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const b = files.get(req.url ?? '');
    if (!b) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'application/gzip' }).end(b);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  // this artifact server is on loopback: allow exactly its host:port through the Git URL policy
  process.env.CONSOLE_GIT_ALLOW_HOSTS = new URL(base).host;
});
afterAll(() => {
  delete process.env.CONSOLE_GIT_ALLOW_HOSTS;
  server.close();
  rmSync(work, { recursive: true, force: true });
});

describe('renderHash: not a way to guess a Secret value offline', () => {
  // already in the hash's sort order (v1/ConfigMap before v1/Secret)
  const render = (password: string): Obj[] => [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'app' }, data: { level: 'info' } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'app' }, stringData: { password } },
  ];
  const plainHash = (objects: Obj[]) => `sha256:${sha256(canonicalJson(objects))}`;

  it('renders differing only in a low-entropy Secret value ("a" vs "b"): different hashes, neither recomputable', () => {
    const [a, b] = [renderHash(render('a')), renderHash(render('b'))];
    expect(a).not.toBe(b);
    expect(a).not.toBe(plainHash(render('a')));
    expect(b).not.toBe(plainHash(render('b')));
    expect(a).toBe(plainHash(render('a').map((o) => maskSecrets(o))));
    expect(renderHash([...render('a')].reverse())).toBe(a);
  });

  it('renderFlux returns the hash of the masked render', async () => {
    const src = artifact('hash', { 'app/render.yaml': secretYaml('a') });
    const r = await renderFlux(ks, src, tools());
    expect(r.renderHash).toBe(renderHash(r.objects));
    const sorted = [...r.objects].sort((x, y) => String(x.kind).localeCompare(String(y.kind)));
    expect(r.renderHash).not.toBe(plainHash(sorted));
    expect(r.renderHash).toBe(plainHash(sorted.map((o) => maskSecrets(o))));
  });
});

describe('render error text: Secret values masked', () => {
  const caught = async (p: Promise<unknown>): Promise<RenderError> => {
    try {
      await p;
    } catch (e) {
      if (e instanceof RenderError) return e;
      throw e;
    }
    throw new Error('the render did not fail');
  };

  it('a renderer error quoting Secrets of the source tree, and Secret data it never saw', async () => {
    const src = artifact('fails', {
      'app/secret.yaml': secretYaml('hunter22'),
      'app/error.txt':
        'Error: accumulating resources: Secret db: password "hunter22" rejected\n' +
        `token tok-12345 (${b64('tok-12345')})\nexcerpt:\nstringData:\n  other: never-in-git\n`,
    });
    const e = await caught(renderFlux(ks, src, tools()));
    expect(e.stage).toBe('render');
    for (const leak of ['hunter22', 'tok-12345', b64('tok-12345'), 'never-in-git'])
      expect(e.message).not.toContain(leak);
    expect(e.message).toContain(`password "${maskValue('hunter22')}" rejected`);
    expect(e.message).toContain('accumulating resources');
  });

  it('values of a kustomize secretGenerator (literals, env files)', async () => {
    const src = artifact('generator', {
      'app/kustomization.yaml':
        'secretGenerator:\n  - name: api\n    literals: [api-key=lit-secret-1]\n    envs: [creds.env]\n',
      'app/creds.env': '# comment\nDB_PASS=env-secret-2\n',
      'app/error.txt': 'Error: generator failed on lit-secret-1 and env-secret-2\n',
    });
    const e = await caught(renderFlux(ks, src, tools()));
    expect(e.message).not.toMatch(/lit-secret-1|env-secret-2/);
    expect(e.message).toContain('generator failed on <secret ');
  });

  it('a parse error of the rendered output quoting a Secret value', async () => {
    const src = artifact('parse', {
      'app/render.yaml': `${secretYaml('hunter22')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  note: hunter22: bad\n`,
    });
    const e = await caught(renderFlux(ks, src, tools()));
    expect(e.stage).toBe('parse');
    expect(e.message).toMatch(/invalid YAML/);
    expect(e.message).not.toContain('hunter22');
  });
});

describe('diff notes and errors: dry-run and render error text masked', () => {
  const app: App = {
    id: 'c/flux-system/kustomization/app',
    cluster: 'c',
    controller: 'flux',
    kind: 'Kustomization',
    namespace: 'flux-system',
    name: 'app',
    env: 'dev',
    source: {},
    automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
    sync: 'Synced',
    health: 'Healthy',
    healthMessage: '',
    conditions: [],
    inventory: [],
    warnings: [],
  };
  const live: Obj = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'app' },
    data: { token: b64('live-pass-9') },
  };
  const deps = (sourceObject: Obj, errors: { dryRun?: Error; live?: Error } = {}): DiffDeps => ({
    conn: {
      json: () => Promise.reject(errors.dryRun ?? new Error('no dry-run in this test')),
    } as unknown as ClusterConnection,
    discovery: {
      path: (_v: string, _k: string, ns: string | undefined, name: string) =>
        Promise.resolve(`/api/v1/namespaces/${ns ?? ''}/secrets/${name}`),
    } as unknown as Discovery,
    tools: tools(),
    appObject: ks,
    sourceObject,
    configMap: () => undefined,
    tracked: () => [],
    getLive: () => (errors.live ? Promise.reject(errors.live) : Promise.resolve(live)),
  });

  it('a dry-run error quoting the desired and the live Secret values', async () => {
    const src = artifact('dry-run', { 'app/render.yaml': secretYaml('hunter22') });
    const dryRun = new KubeError(
      `PATCH /api/v1/namespaces/app/secrets/db: Secret "db" is invalid: [stringData[password]: "hunter22", ` +
        `data[token]: Invalid value: "${b64('tok-12345')}", live "${b64('live-pass-9')}" (live-pass-9)]`,
      'c',
      422,
      'Invalid',
    );
    const d = await diffApp(app, deps(src, { dryRun }));
    const note = d.objects.find((o) => o.ref.kind === 'Secret')?.note ?? '';
    expect(note).toMatch(/^server-side dry-run failed: PATCH .*Secret "db" is invalid/);
    for (const leak of ['hunter22', b64('tok-12345'), b64('live-pass-9'), 'live-pass-9'])
      expect(note).not.toContain(leak);
    expect(JSON.stringify(d)).not.toMatch(/hunter22|live-pass-9/);
  });

  it('a live read error quoting a value, and a render error: the note, error and summary are masked', async () => {
    const src = artifact('live-error', { 'app/render.yaml': secretYaml('hunter22') });
    const d = await diffApp(app, deps(src, { live: new Error('GET Secret db: conflict on "hunter22"') }));
    expect(d.objects[0]?.note).toContain(
      `live object unreadable: GET Secret db: conflict on "${maskValue('hunter22')}"`,
    );
    const failing = artifact('diff-render-error', {
      'app/secret.yaml': secretYaml('hunter22'),
      'app/error.txt': 'Error: helm fail: the password hunter22 is too short\n',
    });
    const u = await diffApp(app, deps(failing));
    expect(u.state).toBe('unknown');
    expect(u.error).toContain('the password <secret ');
    expect(`${u.error ?? ''} ${u.summary}`).not.toContain('hunter22');
  });
});

describe('the data directory is owner-only (dirs 0700, files 0600)', () => {
  it('evidence store, accounts, mask key and render cache, created through their own code', async () => {
    const previous = process.umask(0o022); // the usual umask: modes must not depend on main()'s umask(077)
    const dataDir = join(work, 'owner-only', 'data');
    try {
      const store = SqliteEvidenceStore.open(dataDir);
      await store.append({ time: new Date().toISOString(), type: 'console.started', actor: 'console', data: {} });
      await Accounts.open(join(dataDir, 'auth.json'), () => undefined);
      loadMaskKey(dataDir);
      const src = artifact('modes', {
        'app/render.yaml': secretYaml('hunter22'),
        'app/nested/deeper/file.yaml': 'x: 1\n',
      });
      await renderFlux(ks, src, tools(dataDir));
      // every entry as "<path> <mode>", directories ending in "/"
      const seen: string[] = [];
      const walk = (p: string) => {
        const st = lstatSync(p);
        const rel = `${p.slice(dataDir.length)}${st.isDirectory() ? '/' : ''}`;
        seen.push(`${rel.replace(/^\/\/$/, '/')} ${(st.mode & 0o777).toString(8)}`);
        if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
      };
      walk(dataDir);
      await store.close();
      expect(seen).toEqual(
        expect.arrayContaining([
          '/ 700',
          '/render-cache/ 700',
          '/auth.json 600',
          '/mask.key 600',
          '/evidence.sqlite 600',
        ]),
      );
      expect(seen).toContainEqual(
        expect.stringMatching(/^\/render-cache\/artifacts\/sha256-[0-9a-f]+\/app\/nested\/deeper\/ 700$/),
      );
      expect(seen).toContainEqual(expect.stringMatching(/\/app\/nested\/deeper\/file\.yaml 600$/));
      expect(seen.filter((s) => (s.includes('/ ') ? !s.endsWith(' 700') : !s.endsWith(' 600')))).toEqual([]);
    } finally {
      process.umask(previous);
    }
  });
});
