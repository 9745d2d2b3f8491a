// Reading Gitea API v1 (GitHub REST v3) answers: plain JSON read defensively, and a merged pull request's own
// fields, read once for the adapter (gitea.ts) and the review reader (reviews.ts).

export type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
export const s = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A merged pull request as the forge names it; `sha` stands in for a missing merge commit. */
export function mergedPullRequestFields(pr: Json, number: number, sha: string) {
  return {
    number,
    url: s(pr.html_url),
    title: s(pr.title),
    author: s(obj(pr.user).login),
    mergedAt: s(pr.merged_at),
    ...(s(obj(pr.merged_by).login) ? { mergedBy: s(obj(pr.merged_by).login) } : {}),
    mergeCommit: s(pr.merge_commit_sha) || sha,
    baseBranch: s(obj(pr.base).ref),
    headBranch: s(obj(pr.head).ref),
  };
}
