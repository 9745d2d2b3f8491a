// Bare Git mirrors under the data dir, one per repository URL, fetched under the one URL policy (url-policy.ts:
// http(s), ssh only when configured, no private or metadata address unless allow-listed, no redirect): the
// release recorder reads commits from them, the rollback reads trees. Work on one mirror is serialized (git's
// lock files would make a concurrent fetch fail); a URL's user info is cut from every error message.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { GitRunError, runGit } from './run.ts';
import { checkUrlSync } from './url-policy.ts';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** git for the mirrors: the one runner (src/server/git/run.ts); a failure is an Error with its last lines. */
export function git(args: string[], opts: { cwd?: string; timeoutMs?: number; remote?: string } = {}): Promise<string> {
  return runGit(args, opts).catch((e: unknown) => {
    throw e instanceof GitRunError ? new Error(e.message) : e;
  });
}

export class GitMirrors {
  private static readonly shared = new Map<string, GitMirrors>();
  private readonly locks = new Map<string, Promise<unknown>>();

  private constructor(private readonly root: string) {}

  /** One instance per directory in this process: its locks must cover every user of the same mirrors. */
  static for(root: string): GitMirrors {
    let m = GitMirrors.shared.get(root);
    if (!m) GitMirrors.shared.set(root, (m = new GitMirrors(root)));
    return m;
  }

  /**
   * Runs `fn` on the repository's bare mirror, fetched first when `need` is a commit it does not have, or always
   * when `need` is 'fetch' (the branches as they are now).
   */
  async with<T>(rawUrl: string, need: string | 'fetch', fn: (dir: string) => Promise<T>): Promise<T> {
    let url: string;
    try {
      url = checkUrlSync(rawUrl, 'git').href; // the full check (names resolved) runs with the fetch below
    } catch (e) {
      throw new Error(`not a Git URL the console fetches (${message(e)})`);
    }
    const dir = join(this.root, `${createHash('sha256').update(url).digest('hex').slice(0, 16)}.git`);
    const prev = this.locks.get(dir) ?? Promise.resolve();
    const run = prev
      .catch(() => undefined)
      .then(async () => {
        if (!existsSync(dir)) {
          mkdirSync(dir, { recursive: true });
          await git(['init', '-q', '--bare', dir]).catch((e: unknown) => {
            rmSync(dir, { recursive: true, force: true });
            throw e;
          });
        }
        const has =
          need !== 'fetch' &&
          (await git(['-C', dir, 'cat-file', '-e', `${need}^{commit}`]).then(
            () => true,
            () => false,
          ));
        if (!has)
          await git(['-C', dir, 'fetch', '-q', '--prune', '--no-tags', url, '+refs/heads/*:refs/heads/*'], {
            timeoutMs: 60_000,
            remote: url,
          });
        return fn(dir);
      });
    this.locks.set(dir, run);
    try {
      return await run;
    } finally {
      if (this.locks.get(dir) === run) this.locks.delete(dir);
    }
  }
}
