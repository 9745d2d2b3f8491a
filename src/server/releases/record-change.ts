// The release recorder's state 1, change: the commit, read with `git` from a cached bare mirror under the data
// dir (its author, committer, signature, parents and message); unknown with the reason when it cannot be read.
import type { App } from '../../domain/app.ts';
import { GIT_SHOW_FORMAT, parseGitShow, type CommitInfo } from '../../domain/release-commit.ts';
import { automationOfCommit, awaitingPushReport } from '../../domain/image-automation.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import { git, type GitMirrors } from '../git/mirror.ts';
import { message, type StateContext, type Tracked } from './tracking.ts';

/** `git fetch` into a bare mirror under the data dir (once per sha), then `git show -s`. */
export async function readCommit(mirrors: GitMirrors, rawUrl: string, sha: string): Promise<CommitInfo> {
  return mirrors.with(rawUrl, sha, async (dir) =>
    parseGitShow(await git(['-C', dir, 'show', '-s', `--format=${GIT_SHOW_FORMAT}`, sha])),
  );
}

/** how long an automation-authored commit waits for its controller to report the push (`status.lastPushCommit`) */
export const PUSH_REPORT_MS = 60_000;

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
    // made by Flux image automation? Confirmed only by the controller's own report of its push (its status names
    // the commit); an automation-authored commit waits a little for that report, then is recorded as a claim
    const images = ctx.o.imageAutomation?.(app);
    if (
      images?.status === 'ok' &&
      !expired &&
      awaitingPushReport({ author: c.author, committerTime: c.committer.time }, images, Date.now(), PUSH_REPORT_MS)
    )
      return;
    const automation =
      images?.status === 'ok'
        ? automationOfCommit(c, images)
        : images?.status === 'unknown'
          ? { unknown: true, why: images.why ?? 'the image automation could not be read' }
          : undefined;
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
      ...(automation ? { automation } : {}),
    });
  } catch (e) {
    ctx.emit(app, rel, 'change', 'console', {
      ...base,
      status: 'unknown',
      reason: `cannot read the commit: ${message(e)}`,
    });
  }
}
