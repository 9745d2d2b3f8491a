// The forge adapter's contract: what the console asks a Git forge (Gitea, later GitHub, GitLab).
// Kept small on purpose: who reviewed and merged a commit, open a change as a pull request,
// and post/read commit statuses. Every call answers a ForgeResult; nothing throws for an
// expected failure (no forge configured, forge unreachable, refused, not found).

/** A repository on a forge, as parsed from a Git URL. */
export interface RepoRef {
  /** host[:port], the key of the token file */
  host: string;
  owner: string;
  name: string;
}

export interface Approval {
  login: string;
  at?: string;
  /** the commit the approval was given on */
  commit?: string;
}

export interface MergedPullRequest {
  number: number;
  url: string;
  title: string;
  author: string;
  mergedAt: string;
  mergedBy?: string;
  mergeCommit: string;
  baseBranch: string;
  headBranch: string;
  /** users whose latest review is an approval that was not dismissed */
  approvers: Approval[];
}

export interface FileChange {
  path: string;
  /** the whole new content of the file (UTF-8); ignored when `delete` */
  content: string;
  /** remove the file (a rollback to a release that did not have it) */
  delete?: boolean;
}

export interface ProposedChange {
  baseBranch: string;
  /** the new branch; must not exist */
  branch: string;
  title: string;
  body?: string;
  commitMessage: string;
  files: FileChange[];
}

export interface OpenedPullRequest {
  number: number;
  url: string;
  branch: string;
  headCommit: string;
}

/** An open pull request as a retry finds it: its number, link, head branch and commit, and its body. */
export interface OpenPullRequest extends OpenedPullRequest {
  body: string;
}

export type CommitState = 'pending' | 'success' | 'failure' | 'error';

export interface CommitStatus {
  state: CommitState;
  /** e.g. `gitops-console/prod` */
  context: string;
  description?: string;
  targetUrl?: string;
  creator?: string;
  updatedAt?: string;
}

export type ForgeFailure =
  /** no token configured for the repo's host, or the URL names no forge repository */
  | 'no-forge-configured'
  /** network error, timeout, or a 5xx from the forge */
  | 'forge-unreachable'
  /** the forge refused: bad or insufficient token, protected branch, validation */
  | 'refused'
  | 'not-found'
  /** the console's URL policy (git/url-policy.ts) refused the forge's address, its redirect, or a token over http */
  | 'url-refused';

export const FORGE_FAILURE_MESSAGES: Record<ForgeFailure, string> = {
  'no-forge-configured': 'no forge configured',
  'forge-unreachable': 'forge unreachable',
  refused: 'the forge refused the request',
  'not-found': 'not found on the forge',
  'url-refused': 'the console does not send this request',
};

export type ForgeResult<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      state: ForgeFailure;
      /** one line for people; never contains a token */
      message: string;
      /** HTTP status when the forge answered */
      status?: number;
    };

export interface Forge {
  readonly kind: 'gitea';
  /** The pull request whose merge produced `sha`, with its approvers and merge time; `null` when none did. */
  mergedPullRequest(repo: RepoRef, sha: string): Promise<ForgeResult<MergedPullRequest | null>>;
  /** Creates `change.branch` from `change.baseBranch` with one commit of `change.files`, and a pull request. */
  openPullRequest(repo: RepoRef, change: ProposedChange): Promise<ForgeResult<OpenedPullRequest>>;
  /**
   * The open pull requests into `baseBranch` whose head branch starts with `headPrefix` (newest first, at most 50):
   * what a retried request finds instead of opening a second one.
   */
  openPullRequests?(repo: RepoRef, baseBranch: string, headPrefix: string): Promise<ForgeResult<OpenPullRequest[]>>;
  setCommitStatus(repo: RepoRef, sha: string, status: CommitStatus): Promise<ForgeResult<void>>;
  /** The latest status per context. */
  commitStatuses(repo: RepoRef, sha: string): Promise<ForgeResult<CommitStatus[]>>;
  /**
   * An authenticated GET of the forge's API (`path` below its API base, e.g. `/repos/o/r/pulls/1/reviews`):
   * the parsed JSON body. For the readers beside this file (reviews.ts); optional so test stubs may omit it.
   */
  getJson?(path: string): Promise<ForgeResult<unknown>>;
}

export const failure = <T>(state: ForgeFailure, message?: string, status?: number): ForgeResult<T> => ({
  ok: false,
  state,
  message: message ? `${FORGE_FAILURE_MESSAGES[state]}: ${message}` : FORGE_FAILURE_MESSAGES[state],
  ...(status !== undefined ? { status } : {}),
});
