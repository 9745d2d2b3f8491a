// Issue 11, "write back to Git" for incident freezes: the planned files rendered with the sandbox's real
// kustomize give the live values, and a real git round trip against a local bare repository (file://).
// Needs no cluster: the kustomize part is skipped, saying so, only when the sandbox binary is absent.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED_IMAGE_HOST, seedFiles } from '../../sandbox/seed.ts';
import { bin } from '../../sandbox/state.ts';
import { planWriteBack, type WriteBackChange } from '../../src/domain/writeback.ts';
import type { Forge, ProposedChange, RepoRef } from '../../src/server/forge/forge.ts';
import { writeBackToGit } from '../../src/server/freeze/writeback.ts';

type Obj = Record<string, unknown>;
const IMG = `${SEED_IMAGE_HOST}/digital-human`;
const KUSTOMIZE = bin('kustomize');
const deploy = (name: string, namespace = 'dev') => ({ group: 'apps', kind: 'Deployment', namespace, name });
const change = (ref: WriteBackChange['ref'], path: string, liveValue: unknown): WriteBackChange => ({
  id: `${ref.name}:${path}`,
  ref,
  path,
  liveValue,
});

function writeTree(root: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), c);
  }
}

const tmpDirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmpDirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

const hasKustomize = existsSync(KUSTOMIZE);
if (!hasKustomize) console.warn(`writeback: ${KUSTOMIZE} is absent (build the sandbox once); skipping the render test`);

describe.skipIf(!hasKustomize)('write-back rendered with the real kustomize', () => {
  function render(env: string, changes: WriteBackChange[]) {
    const files = seedFiles();
    const planned = planWriteBack({ appPath: `overlays/${env}`, files, changes });
    expect(planned.placements.filter((p) => !p.placed)).toEqual([]);
    expect(Object.keys(planned.files).every((f) => f.startsWith(`overlays/${env}/`))).toBe(true);
    const root = tmp('writeback-render-');
    writeTree(root, { ...files, ...planned.files });
    const out = execFileSync(KUSTOMIZE, ['build', join(root, 'overlays', env)], { encoding: 'utf8', timeout: 60_000 });
    const objects = parseAllDocuments(out).map((d) => d.toJS() as Obj);
    const find = (kind: string, name: string) =>
      objects.find((o) => o.kind === kind && (o.metadata as Obj).name === name) as Obj & {
        spec: Obj & { replicas?: number; template: { spec: { containers: Array<Obj> } } };
        data?: Obj;
      };
    return { find, planned };
  }

  it('dev: replicas, images (entry and new entry), an env value and ConfigMap data render as the live values', () => {
    const { find } = render('dev', [
      change(deploy('render-worker'), 'spec.replicas', 12),
      change(deploy('render-worker'), 'spec.template.spec.containers[name=render].image', `${IMG}/render-worker:1.5.1`),
      change(deploy('session-cache'), 'spec.template.spec.containers[name=session].image', `${IMG}/session-cache:7.4`),
      change(
        deploy('render-worker'),
        'spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value',
        'high',
      ),
      change(deploy('tts-gateway'), 'spec.template.spec.containers[name=tts].resources.requests.cpu', '250m'),
      change({ group: '', kind: 'ConfigMap', namespace: 'dev', name: 'render-worker-config' }, 'data.codec', 'av1'),
      change(
        { group: 'autoscaling', kind: 'HorizontalPodAutoscaler', namespace: 'dev', name: 'render-worker' },
        'spec.maxReplicas',
        30,
      ),
    ]);
    const rw = find('Deployment', 'render-worker');
    expect(rw.spec.replicas).toBe(12);
    expect(rw.spec.template.spec.containers[0]).toMatchObject({
      image: `${IMG}/render-worker:1.5.1`,
      env: [{ name: 'RENDER_QUALITY', value: 'high' }],
      ports: [{ containerPort: 8080, name: 'http' }], // the strategic merge kept the rest of the container
    });
    expect((rw.metadata as Obj).namespace).toBe('dev');
    expect(find('Deployment', 'session-cache').spec.template.spec.containers[0]!.image).toBe(
      `${IMG}/session-cache:7.4`,
    );
    expect(find('Deployment', 'tts-gateway').spec.template.spec.containers[0]!.resources).toEqual({
      requests: { cpu: '250m', memory: '128Mi' },
    });
    expect(find('ConfigMap', 'render-worker-config').data).toEqual({ codec: 'av1', 'max-sessions': '8' });
    expect(find('HorizontalPodAutoscaler', 'render-worker').spec).toMatchObject({ maxReplicas: 30, minReplicas: 2 });
  });

  it('prod: a digest pin moves to a new digest; a workload without an entry gets one', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const { find } = render('prod', [
      change(
        deploy('render-worker', 'prod'),
        'spec.template.spec.containers[name=render].image',
        `${IMG}/render-worker@${digest}`,
      ),
      change(deploy('tts-gateway', 'prod'), 'spec.replicas', 5),
    ]);
    expect(find('Deployment', 'render-worker').spec.template.spec.containers[0]!.image).toBe(
      `${IMG}/render-worker@${digest}`,
    );
    expect(find('Deployment', 'tts-gateway').spec.replicas).toBe(5);
  });
});

// ---------------------------------------------------------------- git round trip

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'seed',
  GIT_AUTHOR_EMAIL: 'seed@example.com',
  GIT_COMMITTER_NAME: 'seed',
  GIT_COMMITTER_EMAIL: 'seed@example.com',
  GIT_TERMINAL_PROMPT: '0',
};
const git = (cwd: string, args: string[]) =>
  execFileSync('git', ['-c', 'commit.gpgsign=false', ...args], { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();

describe('writeBackToGit against a local bare repository', () => {
  let bare = '';
  let url = '';
  let work = '';
  const author = { name: 'On Call', email: 'oncall@example.com' };
  const replicas = [change(deploy('render-worker'), 'spec.replicas', 12)];
  const request = (branch: string, changes = replicas) => ({
    repoUrl: url,
    baseBranch: 'main',
    appPath: './overlays/dev',
    branch,
    message: `Write back freeze ${branch}\n\nrender-worker spec.replicas 4 → 12`,
    author,
    changes,
  });

  beforeAll(() => {
    // the BFF's git refuses file: URLs unless a test allows them (git/run.ts)
    process.env.CONSOLE_GIT_ALLOW_FILE_URLS = '1';
    const root = tmp('writeback-git-');
    bare = join(root, 'digital-human.git');
    git(root, ['init', '--quiet', '--bare', '-b', 'main', bare]);
    const seed = join(root, 'seed');
    mkdirSync(seed);
    writeTree(seed, seedFiles());
    git(seed, ['init', '--quiet', '-b', 'main']);
    git(seed, ['add', '-A']);
    git(seed, ['commit', '--quiet', '-m', 'seed']);
    git(seed, ['push', '--quiet', bare, 'main']);
    url = `file://${bare}`;
    work = join(root, 'work');
    mkdirSync(work);
  });

  const workIsEmpty = () => expect(readdirSync(work)).toEqual([]);

  it('commits one change on a new branch that touches only the overlay’s kustomization', async () => {
    const main = git(bare, ['rev-parse', 'main']);
    const r = await writeBackToGit(request('freeze/x'), { workDir: work });
    expect(r).toMatchObject({ branch: 'freeze/x', baseCommit: main });
    expect(r.placements).toEqual([
      { changeId: replicas[0]!.id, placed: true, file: 'overlays/dev/kustomization.yaml', how: 'kustomize-replicas' },
    ]);
    expect(r.commit).toBe(git(bare, ['rev-parse', 'freeze/x']));
    expect(git(bare, ['rev-list', '--count', 'main..freeze/x'])).toBe('1');
    expect(git(bare, ['diff', '--name-only', 'main', 'freeze/x'])).toBe('overlays/dev/kustomization.yaml');
    expect(
      git(bare, ['diff', '--unified=0', 'main', 'freeze/x'])
        .split('\n')
        .filter((l) => /^[-+] /.test(l)),
    ).toEqual(['-    count: 4', '+    count: 12']);
    expect(git(bare, ['log', '-1', '--format=%an <%ae>|%cn <%ce>|%s', 'freeze/x'])).toBe(
      'On Call <oncall@example.com>|On Call <oncall@example.com>|Write back freeze freeze/x',
    );
    expect(git(bare, ['rev-parse', 'main'])).toBe(main); // the base branch is untouched
    workIsEmpty();
  });

  it('refuses a branch that already exists, clearly, and leaves it as it was', async () => {
    const before = git(bare, ['rev-parse', 'freeze/x']);
    await expect(writeBackToGit(request('freeze/x'), { workDir: work })).rejects.toThrow(
      `branch freeze/x already exists on ${url}`,
    );
    expect(git(bare, ['rev-parse', 'freeze/x'])).toBe(before);
    workIsEmpty();
  });

  it('makes no commit and no branch when nothing can be placed', async () => {
    const r = await writeBackToGit(
      request('freeze/nothing', [
        change({ group: '', kind: 'Secret', namespace: 'dev', name: 'api-keys' }, 'data.token', 'c2VjcmV0'),
      ]),
      { workDir: work },
    );
    expect(r.commit).toBeNull();
    expect(r.placements).toMatchObject([{ placed: false, reason: 'Secret values are never written to Git' }]);
    expect(git(bare, ['branch', '--list', 'freeze/nothing'])).toBe('');
    workIsEmpty();
  });

  it('fails with one line and no credentials when Git is unreachable, and leaves no temp dir', async () => {
    const err = await writeBackToGit(
      { ...request('freeze/y'), repoUrl: 'http://oncall:s3cr3t-token@127.0.0.1:1/x.git' },
      { workDir: work, timeoutMs: 20_000 },
    ).then(
      () => new Error('resolved'),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/^cloning http:\/\/127\.0\.0\.1:1\/x\.git \(main\) failed: .+/);
    expect(err.message).not.toContain('s3cr3t');
    expect(err.message).not.toContain('\n');
    await expect(
      writeBackToGit({ ...request('freeze/y'), repoUrl: 'http://127.0.0.1:1/x.git' }, { workDir: work }),
    ).rejects.toThrow(/127\.0\.0\.1:1/);
    workIsEmpty();
  });

  it('rejects branch names git would read as options', async () => {
    await expect(writeBackToGit(request('--upload-pack=touch /tmp/x'), { workDir: work })).rejects.toThrow(
      /invalid branch name/,
    );
  });

  it('opens a pull request through the forge instead of pushing, with the changed files', async () => {
    const proposed: ProposedChange[] = [];
    const repo: RepoRef = { host: 'forge.example.com', owner: 'platform', name: 'digital-human' };
    const forge = stubForge(async (_repo, c) => {
      proposed.push(c);
      return {
        ok: true,
        value: { number: 7, url: 'https://forge.example.com/pr/7', branch: c.branch, headCommit: 'f'.repeat(40) },
      };
    });
    const r = await writeBackToGit({ ...request('freeze/pr'), forge: { forge, repo } }, { workDir: work });
    expect(r).toMatchObject({
      commit: 'f'.repeat(40),
      pullRequest: { number: 7, url: 'https://forge.example.com/pr/7' },
    });
    expect(proposed).toHaveLength(1);
    expect(proposed[0]).toMatchObject({
      baseBranch: 'main',
      branch: 'freeze/pr',
      title: 'Write back freeze freeze/pr',
    });
    expect(proposed[0]!.files.map((f) => f.path)).toEqual(['overlays/dev/kustomization.yaml']);
    expect(proposed[0]!.files[0]!.content).toContain('count: 12');
    expect(git(bare, ['branch', '--list', 'freeze/pr'])).toBe(''); // the forge made the branch, not git
    workIsEmpty();
  });

  it('pushes with git and reports the forge error when the forge refuses', async () => {
    const forge = stubForge(async () => ({
      ok: false,
      state: 'refused',
      message: 'the forge refused the request: 403',
    }));
    const repo: RepoRef = { host: 'forge.example.com', owner: 'platform', name: 'digital-human' };
    const r = await writeBackToGit({ ...request('freeze/fallback'), forge: { forge, repo } }, { workDir: work });
    expect(r.forgeError).toBe('the forge refused the request: 403');
    expect(r.commit).toBe(git(bare, ['rev-parse', 'freeze/fallback']));
    workIsEmpty();
  });
});

// ---------------------------------------------------------------- scope: only the app's own directory

describe('writeBackToGit edits only the app’s own directory (a file dev and prod share)', () => {
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: feature-flags\ndata:\n  mode: normal\n';
  const quality =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: render-worker\nspec:\n  template:\n    spec:\n' +
    '      containers:\n        - name: render\n          env:\n            - name: RENDER_QUALITY\n              value: reduced\n';
  let bare = '';
  let root = '';

  beforeAll(() => {
    process.env.CONSOLE_GIT_ALLOW_FILE_URLS = '1';
    root = tmp('writeback-scope-');
    bare = join(root, 'shared.git');
    git(root, ['init', '--quiet', '--bare', '-b', 'main', bare]);
    const files: Record<string, string> = {
      ...seedFiles(),
      'overlays/shared/cm.yaml': cm,
      'overlays/common/p.yaml': quality,
    };
    // both overlays list the shared resource and the shared patch
    for (const env of ['dev', 'prod']) {
      const k = `overlays/${env}/kustomization.yaml`;
      files[k] =
        `${files[k]!.replace('  - ../../base\n', '  - ../../base\n  - ../shared/cm.yaml\n')}patches:\n  - path: ../common/p.yaml\n`;
    }
    const seed = join(root, 'seed');
    mkdirSync(seed);
    writeTree(seed, files);
    git(seed, ['init', '--quiet', '-b', 'main']);
    git(seed, ['add', '-A']);
    git(seed, ['commit', '--quiet', '-m', 'seed']);
    git(seed, ['push', '--quiet', bare, 'main']);
  });

  /** `kustomize build` of an overlay of a branch, as Flux builds it (files outside the overlay allowed). */
  const build = (branch: string, env: string): string => {
    const dir = join(root, `co-${branch.replace(/\W/g, '-')}`);
    if (!existsSync(dir)) git(root, ['clone', '--quiet', '--branch', branch, bare, dir]);
    return execFileSync(KUSTOMIZE, ['build', '--load-restrictor', 'LoadRestrictionsNone', join(dir, 'overlays', env)], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  };

  it('a prod freeze’s branch changes only overlays/prod; dev renders as before and prod with the live values', async () => {
    const work = tmp('writeback-scope-work-');
    const r = await writeBackToGit(
      {
        repoUrl: `file://${bare}`,
        baseBranch: 'main',
        appPath: 'overlays/prod',
        branch: 'freeze/prod-shared',
        message: 'Write back freeze prod-shared',
        author: { name: 'On Call', email: 'oncall@example.com' },
        changes: [
          change({ group: '', kind: 'ConfigMap', namespace: 'prod', name: 'feature-flags' }, 'data.mode', 'degraded'),
          change(
            deploy('render-worker', 'prod'),
            'spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value',
            'low',
          ),
        ],
      },
      { workDir: work },
    );
    expect(r.placements.map((p) => (p.placed ? [p.file, p.how] : p.reason))).toEqual([
      ['overlays/prod/freeze-writeback-feature-flags.yaml', 'new-patch'],
      ['overlays/prod/freeze-writeback-render-worker.yaml', 'new-patch'],
    ]);
    expect(r.placements.map((p) => (p.placed ? p.note : undefined))).toEqual([
      expect.stringContaining('set in ../shared/cm.yaml, outside overlays/prod'),
      expect.stringContaining('set in ../common/p.yaml, outside overlays/prod'),
    ]);
    expect(git(bare, ['diff', '--name-only', 'main', 'freeze/prod-shared']).split('\n')).toEqual([
      'overlays/prod/freeze-writeback-feature-flags.yaml',
      'overlays/prod/freeze-writeback-render-worker.yaml',
      'overlays/prod/kustomization.yaml',
    ]);
    if (!hasKustomize) return;
    expect(build('freeze/prod-shared', 'dev')).toBe(build('main', 'dev'));
    const prod = parseAllDocuments(build('freeze/prod-shared', 'prod')).map((d) => d.toJS() as Obj);
    const named = (kind: string, name: string) =>
      prod.find((o) => o.kind === kind && (o.metadata as Obj).name === name) as Obj;
    expect(named('ConfigMap', 'feature-flags').data).toEqual({ mode: 'degraded' });
    const rw = named('Deployment', 'render-worker') as { spec: { template: { spec: { containers: Obj[] } } } };
    expect(rw.spec.template.spec.containers[0]!.env).toEqual([{ name: 'RENDER_QUALITY', value: 'low' }]);
  });
});

/** A forge whose only working call is openPullRequest (the Gitea adapter has its own sandbox tests). */
function stubForge(openPullRequest: Forge['openPullRequest']): Forge {
  const unused = async () => ({ ok: false as const, state: 'not-found' as const, message: 'unused' });
  return { kind: 'gitea', openPullRequest, mergedPullRequest: unused, setCommitStatus: unused, commitStatuses: unused };
}
