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

/** At most this many commits of a range are named (the count says how many there were). */
export const MAX_BETWEEN = 20;

/**
 * The commits after `from` up to `to`, `to` excluded, newest first (at most MAX_BETWEEN) and how many: what a
 * controller applied together with `to` when it never applied them on their own (a busy repository: a poll sees
 * several pushes at once). Undefined when `from` is not an ancestor of `to` (a force push: no range to name).
 */
export async function commitsBetween(
  mirrors: GitMirrors,
  rawUrl: string,
  from: string,
  to: string,
): Promise<{ commits: Array<{ sha: string; subject: string }>; count: number } | undefined> {
  return mirrors.with(rawUrl, to, async (dir) => {
    try {
      await git(['-C', dir, 'merge-base', '--is-ancestor', from, to]);
    } catch {
      return undefined;
    }
    const count = Number((await git(['-C', dir, 'rev-list', '--count', `${from}..${to}`])).trim()) - 1;
    const out = await git(['-C', dir, 'log', `--max-count=${MAX_BETWEEN + 1}`, '--format=%H%x1f%s', `${from}..${to}`]);
    const commits = out
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [sha = '', subject = ''] = l.split('\x1f');
        return { sha, subject: subject.slice(0, 200) };
      })
      .filter((c) => c.sha !== to)
      .slice(0, MAX_BETWEEN);
    return { commits, count: Math.max(0, count) };
  });
}

/** how long after an automation-authored commit its controller's report of the push (`status.lastPushCommit`) is awaited */
export const PUSH_REPORT_MS = 60_000;

/** The change state reads the commit through the recorder (its public readCommit, over its mirrors). */
export interface ChangeContext extends StateContext {
  readCommit(rawUrl: string, sha: string): Promise<CommitInfo>;
  /** the commits between the release before and this one (commitsBetween); absent in some tests */
  commitsBetween?(
    rawUrl: string,
    from: string,
    to: string,
  ): Promise<{ commits: Array<{ sha: string; subject: string }>; count: number } | undefined>;
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
    const data = {
      ...base,
      author: c.author,
      committer: c.committer,
      commitTime: c.committer.time,
      signature: c.signature,
      parents: c.parents,
      merge: c.parents.length > 1,
      subject: c.subject,
      message: c.message,
      ...(await between(ctx, url, rel)),
    };
    // made by Flux image automation? Confirmed only by the controller's own report of its push (its status names
    // the commit). Recorded at once; an automation-authored commit not reported yet is recorded as a claim and,
    // should the report come within PUSH_REPORT_MS of the commit, recorded again as confirmed (the newer wins)
    const images = ctx.o.imageAutomation?.(app);
    const automation =
      images?.status === 'ok'
        ? automationOfCommit(c, images)
        : images?.status === 'unknown'
          ? { unknown: true, why: images.why ?? 'the image automation could not be read' }
          : undefined;
    ctx.emit(app, rel, 'change', 'console', { ...data, ...(automation ? { automation } : {}) });
    const commit = { sha: c.sha, author: c.author, committerTime: c.committer.time };
    if (
      images?.status === 'ok' &&
      automation &&
      'confirmed' in automation &&
      !automation.confirmed &&
      awaitingPushReport(commit, images, Date.now(), PUSH_REPORT_MS)
    )
      rel.pushReport = { data, commit, until: Date.parse(c.committer.time) + PUSH_REPORT_MS };
  } catch (e) {
    ctx.emit(app, rel, 'change', 'console', {
      ...base,
      status: 'unknown',
      reason: `cannot read the commit: ${message(e)}`,
    });
  }
}

/**
 * `between`: the commits the controller applied together with this one since the release before (none: absent).
 * Its failure never fails the change state: the commit itself is what the state records.
 */
async function between(ctx: ChangeContext, url: string, rel: Tracked): Promise<Record<string, unknown>> {
  if (!rel.previousSha || !ctx.commitsBetween || rel.previousSha === rel.sha) return {};
  const r = await ctx.commitsBetween(url, rel.previousSha, rel.sha).catch(() => undefined);
  return r && r.count > 0 ? { between: { from: rel.previousSha, commits: r.commits, count: r.count } } : {};
}

/**
 * A commit recorded as claiming image automation: recorded again, confirmed, once the automation's controller
 * reports pushing it (its `status.lastPushCommit`); given up after PUSH_REPORT_MS from the commit.
 */
export function recheckPushReport(ctx: ChangeContext, app: App, rel: Tracked, now = Date.now()): void {
  const p = rel.pushReport;
  if (!p) return;
  const images = ctx.o.imageAutomation?.(app);
  const a = images?.status === 'ok' ? automationOfCommit(p.commit, images) : undefined;
  if (a?.confirmed) {
    ctx.emit(app, rel, 'change', 'console', { ...p.data, automation: a });
    rel.pushReport = undefined;
  } else if (now > p.until) rel.pushReport = undefined;
}
