// The rollback's pure parts and its refusals before any Git or forge work: a path that leaves the repository,
// an unknown release, no forge (never a direct push), a missing reason. And the plan read from a real repository
// whose directories are named like pathspec magic (`:`, `:(top)`, `*`): only that directory is rolled back.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../../domain/app.ts';
import type { Principal } from '../auth/sessions.ts';
import type { EvidenceRecorder } from '../evidence/recorder.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { normalizePath, parseNameStatus, readPlan, RollbackService } from './rollback.ts';

const SHA = 'a'.repeat(40);
const app = {
  id: 'c/flux-system/kustomization/web-dev',
  name: 'web-dev',
  env: 'dev',
  cluster: 'c',
  source: {
    url: 'http://127.0.0.1:1/p/r.git',
    path: './overlays/dev',
    revisionObserved: `main@sha1:${'b'.repeat(40)}`,
  },
} as unknown as App;
const user = { name: 'dev', grants: [] } as unknown as Principal;
const dataDir = mkdtempSync(join(tmpdir(), 'rollback-test-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function service(recorded: string[], forge = false) {
  const acted: unknown[] = [];
  const s = new RollbackService({
    recorder: { act: async (i: unknown) => acted.push(i) } as unknown as EvidenceRecorder,
    store: { list: async () => recorded.map((sha) => ({ data: { sha } })) } as unknown as EvidenceStore,
    forges: {
      forRepoUrl: () =>
        forge
          ? { ok: true, value: { forge: {}, repo: { host: 'h', owner: 'p', name: 'r' } } }
          : { ok: false, state: 'no-forge-configured', message: 'no forge configured' },
    } as never,
    dataDir,
  });
  return { s, acted };
}

describe('rollback', () => {
  it.each([
    ['./overlays/dev', 'overlays/dev'],
    ['overlays/dev/', 'overlays/dev'],
    ['', ''],
    ['.', ''],
    ['./', ''],
    // one rule for the whole product (normalizeRepoPath): a `..` that stays inside the repository is resolved
    ['overlays/../base', 'base'],
    ['/overlays//dev', 'overlays/dev'],
  ])('normalizePath(%j) = %j', (p, want) => expect(normalizePath(p)).toBe(want));
  it('refuses a path that leaves the repository', () => {
    expect(() => normalizePath('../other')).toThrow(/leaves the repository/);
    expect(() => normalizePath('overlays/../../other')).toThrow(/leaves the repository/);
  });
  it('parses git diff --name-status -z', () => {
    expect(
      parseNameStatus('M\0overlays/dev/k.yaml\0D\0overlays/dev/old.yaml\0A\0overlays/dev/new file.yaml\0'),
    ).toEqual([
      { status: 'M', path: 'overlays/dev/k.yaml' },
      { status: 'D', path: 'overlays/dev/old.yaml' },
      { status: 'A', path: 'overlays/dev/new file.yaml' },
    ]);
  });
  it('refuses before acting: bad id, no reason, a release never recorded, no forge', async () => {
    const { s, acted } = service([SHA]);
    await expect(s.open(app, 'HEAD', 'why', user)).rejects.toMatchObject({ status: 400 });
    await expect(s.open(app, SHA, '  ', user)).rejects.toMatchObject({ status: 400, message: /reason/ });
    await expect(s.open(app, 'c'.repeat(40), 'why', user)).rejects.toMatchObject({ status: 404 });
    await expect(s.open(app, SHA, 'why', user)).rejects.toMatchObject({
      status: 409,
      message: /no forge configured .*never a direct push/,
    });
    expect(acted).toEqual([]);
  });
  it('Git unreachable: a clear 502, nothing recorded, nothing opened', async () => {
    const { s, acted } = service([SHA], true);
    await expect(s.open(app, SHA, 'why', user)).rejects.toMatchObject({ status: 502, message: /cannot read/ });
    expect(acted).toEqual([]);
  });
});

describe('rollback plan: the app path is a literal path, never pathspec magic', () => {
  const repo = mkdtempSync(join(dataDir, 'magic-'));
  const g = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-C', repo, ...args], {
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    }).trim();
  // one file in each directory; the directory names are what git would read as magic
  const FILES = [':/x.yaml', ':(top)/y.yaml', '*/z.yaml', 'overlays/dev/a.yaml', 'overlays/prod/b.yaml', 'base/c.yaml'];
  const write = (v: string) => {
    for (const f of FILES) {
      mkdirSync(join(repo, f, '..'), { recursive: true });
      writeFileSync(join(repo, f), `value: ${v}\n`);
    }
    g('add', '-A');
    g('commit', '-q', '-m', v);
    return g('rev-parse', 'HEAD');
  };
  g('init', '-q', '-b', 'main');
  const target = write('old');
  write('new');
  const plan = (appPath: string) =>
    readPlan(repo, { branch: 'main', targetSha: target, path: normalizePath(appPath), shown: 'repo' });

  it.each([
    [':/', ':/x.yaml'],
    [':(top)', ':(top)/y.yaml'],
    ['*', '*/z.yaml'],
    ['overlays/dev', 'overlays/dev/a.yaml'],
  ])('app path %j rolls back only %j; the rest of the repository is listed as outside', async (appPath, only) => {
    const p = await plan(appPath);
    expect(p.files.map((f) => f.path)).toEqual([only]);
    expect(p.files[0]?.content).toBe('value: old\n');
    expect([...p.outside].sort()).toEqual(FILES.filter((f) => f !== only).sort());
  });

  it.each([':(top)missing', ':!overlays/dev', ':(glob)**', ':(exclude)base'])(
    'app path %j names no directory of the repository: nothing to roll back, not everything',
    async (appPath) => {
      const p = await plan(appPath);
      expect(p.files).toEqual([]);
      expect([...p.outside].sort()).toEqual([...FILES].sort());
    },
  );
});
