// The release recorder's state 1, change: the commit, read with `git` from a cached bare mirror under the data
// dir (its author, committer, signature, parents and message); unknown with the reason when it cannot be read.
import type { App } from '../../domain/app.ts';
import { GIT_SHOW_FORMAT, parseGitShow, type CommitInfo } from '../../domain/release-commit.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import { git, type GitMirrors } from '../git/mirror.ts';
import { message, type StateContext, type Tracked } from './tracking.ts';

/** `git fetch` into a bare mirror under the data dir (once per sha), then `git show -s`. */
export async function readCommit(mirrors: GitMirrors, rawUrl: string, sha: string): Promise<CommitInfo> {
  return mirrors.with(rawUrl, sha, async (dir) =>
    parseGitShow(await git(['-C', dir, 'show', '-s', `--format=${GIT_SHOW_FORMAT}`, sha])),
  );
}

/** The change state reads the commit through the recorder (its public readCommit, over its mirrors). */
export interface ChangeContext extends StateContext {
  readCommit(rawUrl: string, sha: string): Promise<CommitInfo>;
}

export async function recordChange(ctx: ChangeContext, app: App, rel: Tracked, expired: boolean): Promise<void> {
  const url = app.source.url;
  const base = { sourceUrl: withoutUserInfo(url) ?? null };
  if (app.controller === 'flux' && app.source.kind && app.source.kind !== 'GitRepository') {
    ctx.emit(app, rel, 'change', 'console', {
      ...base,
      status: 'unknown',
      reason: `the source is a ${app.source.kind}, not a Git repository: no commit to read`,
    });
    return;
  }
  if (!url) {
    // right after start the source object may not be in the cache yet: wait for it while the release is followed
    if (!expired) return;
    ctx.emit(app, rel, 'change', 'console', { ...base, status: 'unknown', reason: 'the app names no source URL' });
    return;
  }
  try {
    const c = await ctx.readCommit(url, rel.sha);
    rel.commitTime = c.committer.time;
    rel.commit = { parents: c.parents, message: c.message };
    ctx.emit(app, rel, 'change', 'console', {
      ...base,
      author: c.author,
      committer: c.committer,
      commitTime: c.committer.time,
      signature: c.signature,
      parents: c.parents,
      merge: c.parents.length > 1,
      subject: c.subject,
      message: c.message,
    });
  } catch (e) {
    ctx.emit(app, rel, 'change', 'console', {
      ...base,
      status: 'unknown',
      reason: `cannot read the commit: ${message(e)}`,
    });
  }
}
