// The commit of a release: revisions → commit shas, `git show` parsing, and what the commit itself claims about
// its review (a merge commit, review trailers) — unknown without a forge: a commit message proves no review
// (the review a forge proves is decided in release-review.ts).

/** A commit sha from a controller's revision: Flux `main@sha1:<sha>` / `sha1:<sha>`, Argo CD a plain sha. */
export function shaOf(revision: string | undefined | null): string | undefined {
  if (!revision) return undefined;
  const m = /(?:^|[@:])([0-9a-f]{40}|[0-9a-f]{64})$/.exec(revision);
  return m?.[1];
}

// ---- git ---------------------------------------------------------------------------------------------------

/** `git show -s --format=` of GIT_SHOW_FORMAT: fields separated by NUL. */
export const GIT_SHOW_FORMAT = '%H%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%G?%x00%GS%x00%P%x00%B';

export interface CommitInfo {
  sha: string;
  author: { name: string; email: string; time: string };
  committer: { name: string; email: string; time: string };
  /** %G?: G good, B bad, U good/unknown validity, X/Y expired, R revoked, E cannot check, N none */
  signature: { status: 'verified' | 'unverified' | 'bad' | 'none'; code: string; signer?: string };
  parents: string[];
  subject: string;
  /** the message, at most 2,000 characters */
  message: string;
}

export function parseGitShow(out: string): CommitInfo {
  const f = out.split('\0');
  if (f.length < 11 || !/^[0-9a-f]{40,64}$/.test(f[0] ?? '')) throw new Error('unreadable git show output');
  const code = (f[7] ?? 'N').trim() || 'N';
  const status = code === 'G' ? 'verified' : code === 'B' ? 'bad' : code === 'N' ? 'none' : 'unverified';
  const message = f.slice(10).join('\0').trim();
  return {
    sha: f[0] as string,
    author: { name: f[1] ?? '', email: f[2] ?? '', time: f[3] ?? '' },
    committer: { name: f[4] ?? '', email: f[5] ?? '', time: f[6] ?? '' },
    signature: { status, code, ...(f[8] ? { signer: f[8] } : {}) },
    parents: (f[9] ?? '').split(' ').filter(Boolean),
    subject: message.split('\n')[0]?.slice(0, 200) ?? '',
    message: message.length > 2000 ? `${message.slice(0, 2000)}…` : message,
  };
}

// ---- 2 review --------------------------------------------------------------------------------------------------

/** Review trailers of a commit message (`Reviewed-by: Name <mail>`, `Approved-by:`), in order, deduplicated. */
export function reviewTrailers(message: string): string[] {
  const out: string[] = [];
  for (const line of message.split('\n')) {
    const m = /^(?:Reviewed-by|Approved-by|Reviewed-on-behalf-of):\s*(.+?)\s*$/i.exec(line);
    const who = m?.[1]?.replace(/\s*<[^>]*>$/, '');
    if (who && !out.includes(who)) out.push(who);
  }
  return out;
}

/** Why a review read from the commit alone is unknown: anyone who can push can write a trailer or a merge. */
export const NO_FORGE_REVIEW = 'no forge configured: a commit message cannot prove a review';

/**
 * The review state without a forge: always unknown. A merge commit and `Reviewed-by:`/`Approved-by:` trailers
 * are kept as what the commit claims (its own author can write both), never as a review.
 */
export function reviewFromCommit(c: Pick<CommitInfo, 'parents' | 'message'>): {
  status: 'unknown';
  reviewed: false;
  merge: boolean;
  trailers: string[];
  reason: string;
} {
  return {
    status: 'unknown',
    reviewed: false,
    merge: c.parents.length > 1,
    trailers: reviewTrailers(c.message),
    reason: NO_FORGE_REVIEW,
  };
}
