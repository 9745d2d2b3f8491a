// The rollback's pure parts and its refusals before any Git or forge work: a path that leaves the repository,
// an unknown release, no forge (never a direct push), a missing reason. And the plan read from a real repository
// whose directories are named like pathspec magic (`:`, `:(top)`, `*`): only that directory is rolled back.
// Intent only for what may happen: a refusal (404/409: no recorded release, no forge, nothing to roll back) is one
// `action.refused` record, never a `release.rollback-requested`; bad input (400) and Git down (502) record nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../../../test/support/git-http-server.ts';
import type { App } from '../../domain/app.ts';
import type { Principal } from '../auth/sessions.ts';
import { EvidenceRecorder, type Refusal } from '../evidence/recorder.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { configureUrlPolicy } from '../git/url-policy.ts';
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
  const refused: Refusal[] = [];
  const s = new RollbackService({
    recorder: {
      act: async (i: unknown) => acted.push(i),
      refuse: async (r: Refusal) => void refused.push(r),
    } as unknown as EvidenceRecorder,
    store: { list: async () => recorded.map((sha) => ({ data: { sha } })) } as unknown as EvidenceStore,
    forges: {
      forRepoUrl: () =>
        forge
          ? { ok: true, value: { forge: {}, repo: { host: 'h', owner: 'p', name: 'r' } } }
          : { ok: false, state: 'no-forge-configured', message: 'no forge configured' },
    } as never,
    dataDir,
  });
  return { s, acted, refused };
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
    const { s, acted, refused } = service([SHA]);
    await expect(s.open(app, 'HEAD', 'why', user)).rejects.toMatchObject({ status: 400 });
    await expect(s.open(app, SHA, '  ', user)).rejects.toMatchObject({ status: 400, message: /reason/ });
    // bad input is said, not recorded
    expect(refused).toEqual([]);
    await expect(s.open(app, 'c'.repeat(40), 'why', user)).rejects.toMatchObject({ status: 404 });
    await expect(s.open(app, SHA, 'why', user)).rejects.toMatchObject({
      status: 409,
      message: /no forge configured .*never a direct push/,
    });
    expect(acted).toEqual([]);
    // each refusal is one action.refused naming the action and the reason
    expect(refused).toEqual([
      expect.objectContaining({
        actor: 'dev',
        app: app.id,
        cluster: 'c',
        env: 'dev',
        action: 'release.rollback-requested',
        reason: `no recorded release ${'c'.repeat(12)} of web-dev`,
        data: { targetSha: 'c'.repeat(40), refusal: 'NotFound' },
      }),
      expect.objectContaining({
        action: 'release.rollback-requested',
        reason: expect.stringMatching(/no forge configured .*never a direct push/),
        data: { targetSha: SHA, refusal: 'NoForge' },
      }),
    ]);
  });
  it('Git unreachable: a clear 502, nothing recorded, nothing opened', async () => {
    const { s, acted, refused } = service([SHA], true);
    await expect(s.open(app, SHA, 'why', user)).rejects.toMatchObject({ status: 502, message: /cannot read/ });
    expect(acted).toEqual([]);
    expect(refused).toEqual([]);
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

describe('rollback refused before its intent: a real repository over HTTP, a real evidence store', () => {
  let server: GitHttpServer;
  beforeAll(async () => {
    server = await startGitHttpServer();
    configureUrlPolicy({ allowHosts: ['127.0.0.1'], allowSsh: false });
  });
  afterAll(async () => {
    configureUrlPolicy(undefined);
    await server.close();
  });

  it('nothing to roll back: 409 and one action.refused (repeated: still one), no intent, the forge never asked', async () => {
    const bare = server.createRepo('web', { 'overlays/dev/k.yaml': 'value: 1\n', 'base/b.yaml': 'b: 1\n' });
    const head = execFileSync('git', ['--git-dir', bare, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    const ev = SqliteEvidenceStore.open(dataDir, 'refused.sqlite');
    try {
      const a = {
        ...app,
        source: { url: server.url('web'), path: './overlays/dev', ref: 'main', revisionObserved: `main@sha1:${head}` },
      } as App;
      // the release the console recorded (the one running now)
      await ev.append({
        time: new Date().toISOString(),
        type: 'release.change',
        actor: 'console',
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        data: { sha: head },
      });
      let asked = 0;
      const s = new RollbackService({
        recorder: new EvidenceRecorder(ev, { warn() {}, error() {} }),
        store: ev,
        forges: {
          forRepoUrl: () => ({
            ok: true,
            value: {
              forge: {
                openPullRequest: async () => {
                  asked++;
                  return { ok: false, state: 'forge-refused', message: 'not expected' };
                },
              },
              repo: { host: '127.0.0.1', owner: 'p', name: 'web' },
            },
          }),
        } as never,
        dataDir,
      });
      for (let i = 0; i < 3; i++)
        await expect(s.open(a, head, 'the new settings break sessions', user)).rejects.toMatchObject({
          status: 409,
          message: `overlays/dev at ${head.slice(0, 7)} is the same as on main now (it is the live release): nothing to roll back`,
        });
      expect(asked).toBe(0);
      const events = (await ev.list({ limit: 100 })).sort((x, y) => x.seq - y.seq);
      expect(events.map((e) => e.type)).toEqual(['release.change', 'action.refused']);
      expect(events[1]).toMatchObject({
        actor: 'dev',
        app: a.id,
        cluster: 'c',
        env: 'dev',
        data: {
          action: 'release.rollback-requested',
          reason: expect.stringMatching(/nothing to roll back$/),
          targetSha: head,
          refusal: 'Conflict',
        },
      });
    } finally {
      await ev.close();
    }
  });
});

describe('a retried rollback finds the one already open', () => {
  let server: GitHttpServer;
  beforeAll(async () => {
    server = await startGitHttpServer();
    configureUrlPolicy({ allowHosts: ['127.0.0.1'], allowSsh: false });
  });
  afterAll(async () => {
    configureUrlPolicy(undefined);
    await server.close();
  });

  /** a repository with two commits: the older release, and main now */
  function twoReleases(name: string): { older: string; head: string } {
    const bare = server.createRepo(name, { 'overlays/dev/k.yaml': 'value: old\n' });
    const older = execFileSync('git', ['--git-dir', bare, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
    const work = mkdtempSync(join(tmpdir(), 'rollback-retry-'));
    const g = (...args: string[]) => execFileSync('git', ['-C', work, ...args], { encoding: 'utf8' }).trim();
    execFileSync('git', ['clone', '-q', bare, work]);
    writeFileSync(join(work, 'overlays/dev/k.yaml'), 'value: new\n');
    g('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qam', 'new');
    g('push', '-q', 'origin', 'main');
    const head = g('rev-parse', 'HEAD');
    rmSync(work, { recursive: true, force: true });
    return { older, head };
  }

  it('a rollback PR to the same release already open: that one is answered, no intent, nothing opened', async () => {
    const { older, head } = twoReleases('retry');
    const ev = SqliteEvidenceStore.open(dataDir, 'retry.sqlite');
    try {
      const a = {
        ...app,
        source: {
          url: server.url('retry'),
          path: './overlays/dev',
          ref: 'main',
          revisionObserved: `main@sha1:${head}`,
        },
      } as App;
      for (const sha of [older, head])
        await ev.append({
          time: new Date().toISOString(),
          type: 'release.change',
          actor: 'console',
          app: a.id,
          cluster: a.cluster,
          env: a.env,
          data: { sha },
        });
      const opened: string[] = [];
      const open: Array<{ number: number; url: string; branch: string; headCommit: string; body: string }> = [];
      const forge = {
        openPullRequests: async (_r: unknown, base: string, prefix: string) => ({
          ok: true,
          value: open.filter((p) => base === 'main' && p.branch.startsWith(prefix)),
        }),
        openPullRequest: async (_r: unknown, change: { branch: string; body?: string }) => {
          opened.push(change.branch);
          const pr = {
            number: 7,
            url: 'http://forge/pr/7',
            branch: change.branch,
            headCommit: 'abc',
            body: change.body ?? '',
          };
          open.push(pr);
          return { ok: true, value: pr };
        },
      };
      const s = new RollbackService({
        recorder: new EvidenceRecorder(ev, { warn() {}, error() {} }),
        store: ev,
        forges: {
          forRepoUrl: () => ({ ok: true, value: { forge, repo: { host: '127.0.0.1', owner: 'p', name: 'retry' } } }),
        } as never,
        dataDir,
      });
      const first = await s.open(a, older, 'sessions break', user);
      expect(first.existing).toBeUndefined();
      expect(opened).toHaveLength(1);
      expect(opened[0]).toMatch(new RegExp(`^rollback/${a.name}-${older.slice(0, 7)}-`));
      // the answer was lost (the replica died after the forge call): the user asks again
      const again = await s.open(a, older, 'sessions break', user);
      expect(again).toMatchObject({ existing: true, pullRequest: { number: 7 }, intentSeq: first.intentSeq });
      expect(opened).toHaveLength(1);
      const intents = await ev.list({ type: 'release.rollback-requested', limit: 10 });
      expect(intents).toHaveLength(1);
      // a forge that cannot say whether one is open: a 502 before any intent, not a second pull request
      forge.openPullRequests = async () =>
        ({ ok: false, state: 'forge-unreachable', message: 'forge unreachable' }) as never;
      await expect(s.open(a, older, 'sessions break', user)).rejects.toMatchObject({ status: 502 });
      expect(opened).toHaveLength(1);
      expect(await ev.list({ type: 'release.rollback-requested', limit: 10 })).toHaveLength(1);
    } finally {
      await ev.close();
    }
  });
});
