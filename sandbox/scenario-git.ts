// Scenario helpers on the seed repository (the forge's, state.git.url; re-exported by scenario.ts): read it
// anonymously over HTTP, change it with a commit pushed to main as the forge admin, merge or delete a branch.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mustState } from './state.ts';
import { forgeAuthEnv } from './forge.ts';
import { forgeUser } from './scenario-forge.ts';

/**
 * git as the scenario author. Reads are anonymous (the forge's repo is public); with `push`, as the forge
 * admin, the only user main's protection lets push directly: its token travels in an environment-only
 * http.extraHeader (forgeAuthEnv), never in a URL, a file under git or a log line. Errors carry git's stderr.
 */
function git(args: string[], cwd: string, push?: 'push'): string {
  try {
    return execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Scenario Author',
        GIT_AUTHOR_EMAIL: 'author@sandbox.invalid',
        GIT_COMMITTER_NAME: 'Scenario Author',
        GIT_COMMITTER_EMAIL: 'author@sandbox.invalid',
        GIT_TERMINAL_PROMPT: '0',
        ...(push ? forgeAuthEnv(forgeUser('admin')) : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`git ${args.find((a) => !a.startsWith('-')) ?? ''}: ${err.stderr?.trim() || err.message}`);
  }
}

/** The HEAD commit of the seed repo's main branch (the forge's, what the controllers fetch), read over HTTP. */
export function repoHead(st = mustState()): string {
  const out = git(['ls-remote', st.git.url, 'refs/heads/main'], tmpdir());
  return out.split(/\s+/)[0] ?? '';
}

/**
 * Clones the seed repo over HTTP, lets `edit` change files in the work tree,
 * commits and pushes to main (as the forge admin, see git()). Returns the new commit sha.
 */
/**
 * commitAndPush, tried again (up to 5 times) when the push is rejected because someone else (a write-back, a
 * rollback, another test) pushed first.
 */
export function commitAndPushRetrying(message: string, edit: (workTree: string) => void, st = mustState()): string {
  for (let attempt = 1; ; attempt++)
    try {
      return commitAndPush(message, edit, st);
    } catch (e) {
      if (attempt >= 5 || !String(e).includes('rejected')) throw e;
    }
}

export function commitAndPush(message: string, edit: (workTree: string) => void, st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-edit-'));
  try {
    // main's last commit only: the seed repository gains hundreds of commits in a run, and a full clone before
    // each push made the forge pack all of them again (a push needs only the parent the server has)
    git(['clone', '-q', '--depth', '1', '--branch', 'main', st.git.url, work], tmpdir());
    edit(work);
    git(['add', '-A'], work);
    git(['commit', '-q', '--allow-empty', '-m', message], work);
    git(['push', '-q', 'origin', 'HEAD:main'], work, 'push');
    return git(['rev-parse', 'HEAD'], work).trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The files that differ between two commits of the seed repo (git diff --name-only, renames off), sorted. */
export function changedBetween(from: string, to: string, st = mustState()): string[] {
  const work = mkdtempSync(join(tmpdir(), 'seed-diff-'));
  try {
    git(['clone', '-q', st.git.url, work], tmpdir());
    return git(['diff', '--no-renames', '--name-only', from, to], work).split('\n').filter(Boolean).sort();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One file of the seed repo as it was at a commit. */
export function readRepoFileAt(path: string, sha: string, st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-show-'));
  try {
    git(['clone', '-q', st.git.url, work], tmpdir());
    return git(['show', `${sha}:${path}`], work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One file of the seed repo at a branch (default main), read from a fresh shallow clone. */
export function readRepoFile(path: string, branch = 'main', st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-read-'));
  try {
    git(['clone', '-q', '--depth', '1', '--branch', branch, st.git.url, work], tmpdir());
    return readFileSync(join(work, path), 'utf8');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The branch merged into main with a merge commit and pushed directly as the forge admin, with no pull
 * request and no review (a reviewer's merge of a forge PR: approvePullRequest + mergePullRequest). Returns the
 * merge commit.
 */
export function mergeBranch(branch: string, st = mustState()): string {
  const work = mkdtempSync(join(tmpdir(), 'seed-merge-'));
  try {
    git(['clone', '-q', st.git.url, work], tmpdir());
    // others may push to main meanwhile (tests share the sandbox): merge again onto the new main and retry
    for (let attempt = 1; ; attempt++) {
      git(['fetch', '-q', 'origin', 'main', `+refs/heads/${branch}:refs/remotes/origin/${branch}`], work);
      git(['reset', '-q', '--hard', 'origin/main'], work);
      git(['merge', '-q', '--no-ff', '-m', `Merge branch '${branch}'`, `origin/${branch}`], work);
      try {
        git(['push', '-q', 'origin', 'HEAD:main'], work, 'push');
        return git(['rev-parse', 'HEAD'], work).trim();
      } catch (e) {
        if (attempt >= 5) throw e;
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Deletes a branch of the seed repo (nothing when it does not exist). */
export function deleteBranch(branch: string, st = mustState()): void {
  const out = git(['ls-remote', st.git.url, `refs/heads/${branch}`], tmpdir());
  if (!out.trim()) return;
  // git push needs a repository to run in, even to delete a remote ref
  const work = mkdtempSync(join(tmpdir(), 'seed-delete-'));
  try {
    git(['init', '-q'], work);
    git(['push', '-q', st.git.url, '--delete', branch], work, 'push');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function writeRepoFile(work: string, path: string, content: string): void {
  mkdirSync(dirname(join(work, path)), { recursive: true });
  writeFileSync(join(work, path), content);
}

/** Removes a resource file from base/ and from base/kustomization.yaml. */
export function removeFromGit(file: string, st = mustState()): string {
  return commitAndPush(
    `Remove ${file}`,
    (w) => {
      rmSync(join(w, 'base', file), { force: true });
      const k = join(w, 'base', 'kustomization.yaml');
      writeFileSync(
        k,
        readFileSync(k, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== `- ${file}`)
          .join('\n'),
      );
    },
    st,
  );
}

/** Makes an overlay render to zero objects (the dangerous-prune scenario). */
export function makeRenderEmpty(env: string, st = mustState()): string {
  return commitAndPush(
    `Empty ${env} render`,
    (w) => {
      writeFileSync(
        join(w, 'overlays', env, 'kustomization.yaml'),
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n',
      );
    },
    st,
  );
}
