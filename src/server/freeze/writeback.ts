// "Write back to Git" at unfreeze: clone the app's repository (shallow, the base branch), place each live
// change in the right file (domain/writeback.ts), commit on a new branch with the on-call's identity, and
// push it — or, when the repository has a forge, open a pull request with the changed files instead.
// git runs through the BFF's one git runner (git/run.ts: execFile with a timeout, never a shell, no prompt,
// no change to any git config, one protocol policy), and the clone, the branch check and the push each pass
// the one URL policy first (git/url-policy.ts: no file:, git: or (unless configured) ssh:, no private or
// metadata address unless allow-listed, no redirect); messages never carry the credentials of a URL. The
// temporary checkout is always removed.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { normalizeRepoPath } from '../../domain/repo-path.ts';
import { redactUrlCredentials } from '../../domain/url-credentials.ts';
import { planWriteBack, type Placement, type WriteBackChange } from '../../domain/writeback.ts';
import type { Forge, RepoRef } from '../forge/forge.ts';
import { GitRunError, runGit } from '../git/run.ts';

export interface WriteBackRequest {
  repoUrl: string;
  baseBranch: string;
  /** the app's directory in the repository, e.g. `overlays/dev` */
  appPath: string;
  /** the new branch, e.g. `freeze/<freezeId>`; must not exist */
  branch: string;
  message: string;
  author: { name: string; email: string };
  changes: WriteBackChange[];
  /** when set, the change is proposed as a pull request through the forge instead of a plain push */
  forge?: { forge: Forge; repo: RepoRef } | undefined;
}

export interface WriteBackOptions {
  /** the git binary */
  git?: string;
  /** where the temporary checkout is made (default: the OS temp dir) */
  workDir?: string;
  /** per git command */
  timeoutMs?: number;
}

export interface WriteBackResult {
  branch: string;
  /** the new commit; `null` when nothing could be placed (no commit, no branch) */
  commit: string | null;
  /** the base branch's commit the change was made on */
  baseCommit: string;
  placements: Placement[];
  pullRequest?: { number: number; url: string };
  /** why the forge could not open the pull request (the branch was pushed with git instead) */
  forgeError?: string;
}

/** Files the planner reads: manifests, kustomizations and chart markers, each at most this big. */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FILES = 20_000;
const READ_NAMES = /(\.ya?ml|\.json|^Kustomization)$/;

/** A ref name git accepts and that cannot be read as an option. */
function assertBranchName(kind: string, name: string): void {
  const ok =
    /^[A-Za-z0-9._/-]+$/.test(name) &&
    !name.startsWith('-') &&
    !name.startsWith('/') &&
    !name.endsWith('/') &&
    !name.endsWith('.lock') &&
    !name.endsWith('.') &&
    !name.includes('..') &&
    !name.includes('//') &&
    !name.split('/').some((part) => part.startsWith('.'));
  if (!ok) throw new Error(`invalid ${kind} name: ${JSON.stringify(name)}`);
}

function oneLine(text: string): string {
  const raw = redactUrlCredentials(text)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^hint:/i.test(l));
  const line =
    raw.find((l) => /^(fatal|error):/i.test(l)) ??
    raw.find((l) => /denied|refused|reject|not found|unable|could not|failed/i.test(l)) ??
    raw[0] ??
    '';
  const clean = line.replace(/^(fatal|error|remote):\s*/i, '');
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}

/** `remote`: the repository URL a clone, ls-remote or push talks to, checked by the URL policy (git/url-policy.ts). */
type Git = (args: string[], what: string, remote?: string) => Promise<string>;

/** git in `cwd` (as `author` when it commits); a failure is `<what> failed: <one line of git's stderr>`. */
function gitIn(bin: string, cwd: string, timeoutMs: number, author: { name: string; email: string } | undefined): Git {
  return async (args, what, remote) => {
    try {
      return await runGit(args, {
        cwd,
        timeoutMs,
        bin,
        ...(author ? { author } : {}),
        ...(remote !== undefined ? { remote } : {}),
      });
    } catch (err) {
      const detail =
        err instanceof GitRunError
          ? err.timedOut
            ? `timed out after ${timeoutMs} ms`
            : oneLine(err.stderr)
          : oneLine(err instanceof Error ? err.message : String(err));
      throw new Error(`${what} failed: ${detail}`);
    }
  };
}

/** Every manifest-like file of the checkout (no `.git`, no symlinks), repo-relative. */
function readCheckout(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  let count = 0;
  const stack = [''];
  while (stack.length) {
    const rel = stack.pop()!;
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== '.git') stack.push(p);
      } else if (entry.isFile() && READ_NAMES.test(entry.name)) {
        if (lstatSync(join(root, p)).size > MAX_FILE_BYTES) continue;
        if (++count > MAX_FILES) throw new Error(`the repository has more than ${MAX_FILES} manifest files`);
        files[p] = readFileSync(join(root, p), 'utf8');
      }
    }
  }
  return files;
}

/** Writes the planned files, refusing paths outside the checkout or through symlinks. */
function writeCheckout(root: string, files: Record<string, string>): string[] {
  const written: string[] = [];
  for (const [path, content] of Object.entries(files)) {
    const norm = normalizeRepoPath(path);
    if (norm === undefined || norm !== path || norm === '' || norm.split('/')[0] === '.git')
      throw new Error(`refusing to write ${path}`);
    let dir = root;
    for (const part of norm.split('/')) {
      dir = join(dir, part);
      let st;
      try {
        st = lstatSync(dir);
      } catch {
        break; // does not exist yet: created below
      }
      if (st.isSymbolicLink()) throw new Error(`refusing to write through the symlink ${path}`);
    }
    const abs = join(root, norm);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
    written.push(norm);
  }
  return written;
}

/**
 * Places the live changes in Git on a new branch. Throws with a one-line message (no credentials) when Git
 * is unreachable, the branch exists or the push is refused; unplaced changes are not errors (see placements).
 */
export async function writeBackToGit(req: WriteBackRequest, opts: WriteBackOptions = {}): Promise<WriteBackResult> {
  assertBranchName('base branch', req.baseBranch);
  assertBranchName('branch', req.branch);
  const appPath = normalizeRepoPath(req.appPath);
  if (appPath === undefined) throw new Error(`invalid app path: ${JSON.stringify(req.appPath)}`);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const bin = opts.git ?? 'git';
  const url = redactUrlCredentials(req.repoUrl);

  const tmp = mkdtempSync(join(opts.workDir ?? tmpdir(), 'gitops-writeback-'));
  try {
    const checkout = join(tmp, 'repo');
    const outside = gitIn(bin, tmp, timeoutMs, undefined);
    await outside(
      ['clone', '--quiet', '--depth', '1', '--single-branch', '--branch', req.baseBranch, '--', req.repoUrl, checkout],
      `cloning ${url} (${req.baseBranch})`,
      req.repoUrl,
    );
    const git = gitIn(bin, checkout, timeoutMs, req.author);
    const baseCommit = (await git(['rev-parse', 'HEAD'], 'reading the base commit')).trim();

    const plan = planWriteBack({ appPath, files: readCheckout(checkout), changes: req.changes });
    const changed = Object.keys(plan.files);
    if (changed.length === 0) return { branch: req.branch, commit: null, baseCommit, placements: plan.placements };

    const existing = await git(
      ['ls-remote', '--heads', 'origin', `refs/heads/${req.branch}`],
      `checking for branch ${req.branch} on ${url}`,
      req.repoUrl,
    );
    if (existing.trim() !== '') throw new Error(`branch ${req.branch} already exists on ${url}`);

    let forgeError: string | undefined;
    if (req.forge) {
      const [title, ...body] = req.message.split('\n');
      const opened = await req.forge.forge.openPullRequest(req.forge.repo, {
        baseBranch: req.baseBranch,
        branch: req.branch,
        title: title || `Write back freeze changes (${req.branch})`,
        body: body.join('\n').trim(),
        commitMessage: req.message,
        files: changed.map((path) => ({ path, content: plan.files[path]! })),
      });
      if (opened.ok)
        return {
          branch: req.branch,
          commit: opened.value.headCommit,
          baseCommit,
          placements: plan.placements,
          pullRequest: { number: opened.value.number, url: opened.value.url },
        };
      forgeError = redactUrlCredentials(opened.message);
    }

    const written = writeCheckout(checkout, plan.files);
    await git(['add', '--', ...written], 'staging the changes');
    await git(['commit', '--quiet', '--no-verify', '-m', req.message], 'committing');
    const commit = (await git(['rev-parse', 'HEAD'], 'reading the new commit')).trim();
    await git(
      ['push', '--quiet', 'origin', `HEAD:refs/heads/${req.branch}`],
      `pushing ${req.branch} to ${url}`,
      req.repoUrl,
    );
    return {
      branch: req.branch,
      commit,
      baseCommit,
      placements: plan.placements,
      ...(forgeError !== undefined ? { forgeError } : {}),
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
