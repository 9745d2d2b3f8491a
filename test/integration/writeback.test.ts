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

/** A forge whose only working call is openPullRequest (the Gitea adapter has its own sandbox tests). */
function stubForge(openPullRequest: Forge['openPullRequest']): Forge {
  const unused = async () => ({ ok: false as const, state: 'not-found' as const, message: 'unused' });
  return { kind: 'gitea', openPullRequest, mergedPullRequest: unused, setCommitStatus: unused, commitStatuses: unused };
}
