// The review state of a release, decided from what the forge says (pure). A review is real only when someone
// other than the change's authors approved the very head commit that was merged, in a pull request into the
// branch the app follows. A commit message (a `Reviewed-by:` trailer, a merge commit) proves nothing: without a
// forge the state is unknown (release-commit.ts), never ok.

/** A reviewer's latest verdict on a pull request (comments do not change it). */
export interface ReviewVerdict {
  login: string;
  state: 'approved' | 'changes-requested';
  /** the commit the review was given on */
  commit?: string | undefined;
  at?: string | undefined;
  dismissed: boolean;
  /** the forge counts this reviewer for the branch (Gitea: write access, or in the branch's approvers list) */
  official?: boolean | undefined;
}

/** What the forge says about the pull request whose merge produced a commit. */
export interface PullRequestFacts {
  number: number;
  url: string;
  title: string;
  author: string;
  mergedAt: string;
  mergedBy?: string | undefined;
  mergeCommit: string;
  baseBranch: string;
  headBranch: string;
  /** the head the pull request merged, by the forge (Gitea: its `refs/pull/<n>/head`, which a merge freezes) */
  headCommit?: string | undefined;
  /** the repository's default branch (what an Argo CD `HEAD` follows) */
  defaultBranch?: string | undefined;
  verdicts: ReviewVerdict[];
  /** forge users who authored or committed a commit of the pull request; undefined when not read in full */
  contributors?: string[] | undefined;
}

export interface ReviewInput {
  /** the environment requires review (CONSOLE_REVIEW_REQUIRED_ENVS) */
  reviewRequired: boolean;
  /** the branch the app follows (`HEAD`: the repository's default branch); null when it follows no named ref */
  branch: string | null;
  /** the parents of the merged commit, from Git (a merge commit's second parent: the head, when the forge names none) */
  parents?: string[] | undefined;
}

export interface CountedApproval {
  login: string;
  commit: string;
  at: string | null;
}

export interface UncountedVerdict {
  login: string;
  why: string;
  commit: string | null;
  at: string | null;
}

export interface ReviewDecision {
  /** ok: reviewed, or not required here (`reviewed` says which); failed: required and not reviewed */
  status: 'ok' | 'failed' | 'unknown';
  reviewed: boolean;
  /** why it is not reviewed, or cannot be decided */
  reason?: string;
  /** the branch checked against the pull request's base */
  branch: string | null;
  /** the head commit the approvals were checked against */
  headCommit: string | null;
  counted: CountedApproval[];
  notCounted: UncountedVerdict[];
}

const short = (sha: string) => sha.slice(0, 8);

/** The branch an app follows from its revision (`main@sha1:…`) or its ref (Argo CD's targetRevision). */
export function followedBranch(revision: string, ref: string | undefined): string | null {
  const at = revision.lastIndexOf('@');
  const name = at > 0 ? revision.slice(0, at) : ref?.trim();
  if (!name || /^(sha1:|sha256:)?[0-9a-f]{40,64}$/.test(name)) return null;
  return name.replace(/^refs\/heads\//, '');
}

/** Why one verdict does not count (undefined: it counts), before the pull request's own checks. */
function verdictProblem(v: ReviewVerdict, pr: PullRequestFacts, head: string | undefined): string | undefined {
  if (v.state !== 'approved') return 'requested changes';
  if (v.dismissed) return 'the approval was dismissed';
  if (v.official === false) return 'not an official review (no write access, or not among the branch approvers)';
  if (v.login === pr.author) return "the pull request's author";
  if (pr.contributors?.includes(v.login)) return 'authored or committed a commit of the change';
  if (!v.commit) return 'the forge does not say which commit was approved';
  if (!head) return 'the merged head commit is not known';
  if (v.commit !== head)
    return `approved ${short(v.commit)}, not the merged head ${short(head)}: commits were pushed after the approval`;
  return undefined;
}

/**
 * The review of a commit a pull request merged. An approval counts only when it is the reviewer's latest verdict,
 * not dismissed, official, by someone who neither opened the pull request nor wrote or committed any of its
 * commits, and given on the head commit that was merged (an approval before a later push does not count); and
 * only when the pull request merged into the branch the app follows. No approval that counts is no review:
 * `failed` where review is required, elsewhere `ok` with `reviewed: false`. What cannot be checked is `unknown`.
 */
export function decidePullRequestReview(pr: PullRequestFacts, input: ReviewInput): ReviewDecision {
  const branch = input.branch === 'HEAD' ? (pr.defaultBranch ?? null) : input.branch;
  // the forge's frozen head ref names what the merge took in every merge style (a rebase-merge's second parent
  // is a rebased copy); without it, a merge commit's second parent
  const fromGit = input.parents && input.parents.length === 2 ? input.parents[1] : undefined;
  const head = pr.headCommit ?? fromGit;
  const wrongBase = branch !== null && pr.baseBranch !== branch;
  const counted: CountedApproval[] = [];
  const notCounted: UncountedVerdict[] = [];
  for (const v of pr.verdicts) {
    const why =
      verdictProblem(v, pr, head) ??
      (wrongBase ? `approved a merge into ${pr.baseBranch}, not ${String(branch)}` : undefined);
    if (why) notCounted.push({ login: v.login, why, commit: v.commit ?? null, at: v.at ?? null });
    else counted.push({ login: v.login, commit: v.commit ?? '', at: v.at ?? null });
  }
  const out = { branch, headCommit: head ?? null, counted, notCounted };
  // undecided: no approval is shown as counted
  const unknown = (reason: string): ReviewDecision => ({
    status: 'unknown',
    reviewed: false,
    reason,
    ...out,
    counted: [],
    notCounted: [...notCounted, ...counted.map((c) => ({ ...c, why: 'not checked: the review is unknown' }))],
  });
  const notReviewed = (reason: string): ReviewDecision => ({
    status: input.reviewRequired ? 'failed' : 'ok',
    reviewed: false,
    reason,
    ...out,
  });
  const n = `pull request #${pr.number}`;
  if (wrongBase) return notReviewed(`${n} was merged into ${pr.baseBranch}, not ${branch}, the branch the app follows`);
  if (branch === null)
    return unknown(
      input.branch === 'HEAD'
        ? `the repository's default branch is not known: cannot check that ${n} (into ${pr.baseBranch}) is what the app follows`
        : `the app follows no branch: cannot check that ${n} (into ${pr.baseBranch}) is what it follows`,
    );
  if (!head) return unknown(`the head commit ${n} merged could not be read: its approvals cannot be checked`);
  if (counted.length && pr.contributors === undefined)
    return unknown(`who wrote the commits of ${n} could not be read: its approvals cannot be checked`);
  if (counted.length) return { status: 'ok', reviewed: true, ...out };
  const approvals = pr.verdicts.filter((v) => v.state === 'approved');
  if (!approvals.length) return notReviewed(`${n} was merged without an approving review`);
  const only = approvals.length === 1 ? approvals[0] : undefined;
  const ownChange = only && (only.login === pr.author || pr.contributors?.includes(only.login));
  if (only && ownChange && only.login === pr.mergedBy)
    return notReviewed(`${n} was merged by ${only.login}, its only approver, who wrote the change: no review`);
  return notReviewed(`${n} has no approval that counts: ${notCounted.map((x) => `${x.login} (${x.why})`).join('; ')}`);
}

/**
 * The review of a commit no pull request merged, on a repository whose forge answered: a direct push. Review
 * trailers in its message are kept as what they are, a claim; the push is `failed` where review is required.
 */
export function decideDirectPush(
  trailers: string[],
  input: { reviewRequired: boolean; host: string; env: string },
): Pick<ReviewDecision, 'status' | 'reviewed' | 'reason' | 'notCounted'> {
  const claimed = trailers.length
    ? `; its message names ${trailers.join(', ')} as reviewer(s), which a commit message cannot prove`
    : '';
  const reason = `direct push: no pull request on ${input.host} merged this commit${claimed}`;
  return {
    status: input.reviewRequired ? 'failed' : 'ok',
    reviewed: false,
    reason: input.reviewRequired ? `${reason}, and ${input.env} requires review` : reason,
    notCounted: trailers.map((login) => ({
      login,
      why: 'a review trailer in the commit message: not a review on the forge',
      commit: null,
      at: null,
    })),
  };
}
