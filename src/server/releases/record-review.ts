// The release recorder's state 2, review: the pull request that merged the commit and its approvers (the forge
// of the repo host), or without a forge the merge commit and its review trailers; a direct push is flagged (fails
// where the environment requires review). A forge that does not answer is asked again while the release is followed.
import type { App } from '../../domain/app.ts';
import { reviewFromCommit } from '../../domain/release-commit.ts';
import { REVIEW_RETRY_MS, type StateContext, type Tracked } from './tracking.ts';

export function reviewDue(rel: Tracked, expired: boolean): boolean {
  if (!rel.recorded.has('change')) return false;
  if (!rel.recorded.has('review')) return true;
  if (rel.reviewRetryAt === undefined) return false;
  if (expired) {
    rel.reviewRetryAt = undefined; // the unknown state stays, with its reason
    return false;
  }
  return Date.now() >= rel.reviewRetryAt;
}

export async function recordReview(ctx: StateContext, app: App, rel: Tracked): Promise<void> {
  const required = (ctx.o.reviewRequiredEnvs ?? ['prod']).includes(app.env);
  const base = { reviewRequired: required, branch: rel.revision.includes('@') ? rel.revision.split('@')[0] : null };
  const commit = rel.commit;
  const found = app.source.url && ctx.o.forges ? ctx.o.forges.forRepoUrl(app.source.url) : undefined;
  if (found?.ok) {
    const { forge, repo } = found.value;
    const r = await forge.mergedPullRequest(repo, rel.sha);
    if (!r.ok) {
      // the forge is down or refused: unknown with why, asked again while the release is followed
      const retry = r.state === 'forge-unreachable';
      rel.reviewRetryAt = retry ? Date.now() + (ctx.o.reviewRetryMs ?? REVIEW_RETRY_MS) : undefined;
      if (rel.recorded.get('review')?.reason !== r.message)
        ctx.emit(app, rel, 'review', 'console', {
          ...base,
          source: 'forge',
          forge: `${forge.kind} ${repo.host}`,
          status: 'unknown',
          reason: r.message,
        });
      return;
    }
    rel.reviewRetryAt = undefined;
    const pr = r.value;
    if (pr) {
      const approvers = pr.approvers.map((a) => a.login);
      const unreviewed = approvers.length === 0;
      ctx.emit(app, rel, 'review', pr.mergedBy ?? pr.author, {
        ...base,
        source: 'forge',
        forge: `${forge.kind} ${repo.host}`,
        pullRequest: {
          number: pr.number,
          url: pr.url,
          title: pr.title.slice(0, 300),
          author: pr.author,
          mergedAt: pr.mergedAt,
          mergedBy: pr.mergedBy ?? null,
          baseBranch: pr.baseBranch,
          headBranch: pr.headBranch,
        },
        approvers,
        approvals: pr.approvers.map((a) => ({ login: a.login, at: a.at ?? null, commit: a.commit ?? null })),
        mergeTime: pr.mergedAt,
        ...(unreviewed && required
          ? { status: 'failed', reason: `pull request #${pr.number} was merged without an approving review` }
          : {}),
      });
      return;
    }
    // no pull request merged it: a direct push (review trailers, if any, are named but not a forge review)
    const fromCommit = commit ? reviewFromCommit(commit, required) : undefined;
    ctx.emit(app, rel, 'review', 'console', {
      ...base,
      source: 'forge',
      forge: `${forge.kind} ${repo.host}`,
      pullRequest: null,
      directPush: true,
      merge: fromCommit?.merge ?? null,
      approvers: [],
      trailers: fromCommit?.approvers ?? [],
      ...(required
        ? {
            status: 'failed',
            reason: `direct push: no pull request on ${repo.host} merged this commit, and ${app.env} requires review`,
          }
        : {}),
    });
    return;
  }
  rel.reviewRetryAt = undefined;
  const noForge = found && !found.ok ? found.message : 'no forge configured';
  if (!commit) {
    ctx.emit(app, rel, 'review', 'console', {
      ...base,
      source: 'commit',
      forge: noForge,
      status: 'unknown',
      reason: `${noForge}, and the commit could not be read`,
    });
    return;
  }
  const v = reviewFromCommit(commit, required);
  ctx.emit(app, rel, 'review', 'console', {
    ...base,
    source: 'commit',
    forge: noForge,
    merge: v.merge,
    directPush: v.directPush,
    approvers: v.approvers,
    ...(v.status !== 'ok' ? { status: v.status, reason: v.reason } : {}),
  });
}
