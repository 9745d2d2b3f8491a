// The release recorder's state 2, review: how the commit reached the branch, as the repo host's forge proves it.
// A pull request is reviewed when someone other than its authors approved the head commit it merged, into the
// branch the app follows (domain/release-review.ts decides; forge/reviews.ts reads). A commit no pull request
// merged is a direct push: `failed` where the environment requires review. Without a forge the state is unknown:
// a merge commit or a `Reviewed-by:` trailer is what the commit claims, and its author can write both. A forge
// that does not answer is asked again while the release is followed. The record keeps what was checked.
import type { App } from '../../domain/app.ts';
import { NO_FORGE_REVIEW, reviewFromCommit, reviewTrailers } from '../../domain/release-commit.ts';
import { decideDirectPush, decidePullRequestReview, followedBranch } from '../../domain/release-review.ts';
import { pullRequestReviewOf } from '../forge/reviews.ts';
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
  const branch = followedBranch(rel.revision, app.source.ref);
  const base = { reviewRequired: required, branch };
  const commit = rel.commit;
  const found = app.source.url && ctx.o.forges ? ctx.o.forges.forRepoUrl(app.source.url) : undefined;
  if (!found?.ok) {
    // no forge: what the commit claims is kept, and proves nothing
    rel.reviewRetryAt = undefined;
    const claims = commit ? reviewFromCommit(commit) : undefined;
    ctx.emit(app, rel, 'review', 'console', {
      ...base,
      source: 'commit',
      forge: found && !found.ok ? found.message : 'no forge configured',
      reviewed: false,
      merge: claims?.merge ?? null,
      trailers: claims?.trailers ?? [],
      approvers: [],
      status: 'unknown',
      reason: commit ? NO_FORGE_REVIEW : `${NO_FORGE_REVIEW} (and the commit could not be read)`,
    });
    return;
  }
  const { forge, repo } = found.value;
  const forgeName = `${forge.kind} ${repo.host}`;
  const r = await pullRequestReviewOf(forge, repo, rel.sha);
  if (!r.ok) {
    // the forge is down or refused: unknown with why, asked again while the release is followed
    const retry = r.state === 'forge-unreachable';
    rel.reviewRetryAt = retry ? Date.now() + (ctx.o.reviewRetryMs ?? REVIEW_RETRY_MS) : undefined;
    if (rel.recorded.get('review')?.reason !== r.message)
      ctx.emit(app, rel, 'review', 'console', {
        ...base,
        source: 'forge',
        forge: forgeName,
        reviewed: false,
        approvers: [],
        status: 'unknown',
        reason: r.message,
      });
    return;
  }
  rel.reviewRetryAt = undefined;
  const pr = r.value;
  if (!pr) {
    // no pull request merged it: a direct push (review trailers, if any, are named, and not counted)
    const trailers = commit ? reviewTrailers(commit.message) : [];
    const d = decideDirectPush(trailers, { reviewRequired: required, host: repo.host, env: app.env });
    ctx.emit(app, rel, 'review', 'console', {
      ...base,
      source: 'forge',
      forge: forgeName,
      pullRequest: null,
      directPush: true,
      merge: commit ? commit.parents.length > 1 : null,
      reviewed: false,
      approvers: [],
      trailers,
      notCounted: d.notCounted,
      status: d.status,
      ...(d.reason ? { reason: d.reason } : {}),
    });
    return;
  }
  const d = decidePullRequestReview(pr, { reviewRequired: required, branch, parents: commit?.parents });
  ctx.emit(app, rel, 'review', pr.mergedBy ?? pr.author, {
    ...base,
    branch: d.branch,
    source: 'forge',
    forge: forgeName,
    pullRequest: {
      number: pr.number,
      url: pr.url,
      title: pr.title.slice(0, 300),
      author: pr.author,
      mergedAt: pr.mergedAt,
      mergedBy: pr.mergedBy ?? null,
      baseBranch: pr.baseBranch,
      headBranch: pr.headBranch,
      headCommit: d.headCommit,
      forgeHeadCommit: pr.headCommit ?? null,
    },
    reviewed: d.reviewed,
    approvers: d.counted.map((a) => a.login),
    approvals: d.counted,
    notCounted: d.notCounted,
    contributors: pr.contributors ?? null,
    mergeTime: pr.mergedAt,
    status: d.status,
    ...(d.reason ? { reason: d.reason } : {}),
  });
}
