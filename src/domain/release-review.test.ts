// The review decision: an approval counts only from someone other than the change's authors, on the merged head,
// in a pull request into the branch the app follows; a commit message proves nothing.
import { describe, expect, it } from 'vitest';
import {
  decideDirectPush,
  decidePullRequestReview,
  followedBranch,
  type PullRequestFacts,
  type ReviewVerdict,
} from './release-review.ts';

const BASE = 'b'.repeat(40);
const HEAD = 'c'.repeat(40);
const OLD = 'e'.repeat(40);
const MOVED = 'f'.repeat(40);

const approval = (login: string, commit: string | undefined = HEAD, extra: Partial<ReviewVerdict> = {}) => ({
  login,
  state: 'approved' as const,
  commit,
  at: '2026-12-01T09:00:00Z',
  dismissed: false,
  official: true,
  ...extra,
});

const pr = (over: Partial<PullRequestFacts> = {}): PullRequestFacts => ({
  number: 7,
  url: 'http://forge/p/r/pulls/7',
  title: 'bump',
  author: 'dev',
  mergedAt: '2026-12-01T10:00:00Z',
  mergedBy: 'dev',
  mergeCommit: 'a'.repeat(40),
  baseBranch: 'main',
  headBranch: 'bump',
  headCommit: HEAD,
  defaultBranch: 'main',
  verdicts: [approval('rita')],
  contributors: ['dev'],
  ...over,
});

const prod = { reviewRequired: true, branch: 'main', parents: [BASE, HEAD] };
const dev = { ...prod, reviewRequired: false };

describe('a pull request merged into the branch the app follows', () => {
  it.each([
    ['a valid approval', pr(), prod, 'ok', true, ['rita'], undefined],
    [
      'an approval by the author',
      pr({ verdicts: [approval('dev')], mergedBy: 'ops' }),
      prod,
      'failed',
      false,
      [],
      /dev \(the pull request's author\)/,
    ],
    [
      'a stale approval (given before a later push)',
      pr({ verdicts: [approval('rita', OLD)] }),
      prod,
      'failed',
      false,
      [],
      /rita \(approved eeeeeeee, not the merged head cccccccc: commits were pushed after the approval\)/,
    ],
    [
      'a wrong base branch',
      pr({ baseBranch: 'release' }),
      prod,
      'failed',
      false,
      [],
      /merged into release, not main, the branch the app follows/,
    ],
    ['no review at all', pr({ verdicts: [] }), prod, 'failed', false, [], /merged without an approving review/],
    [
      'a dismissed approval',
      pr({ verdicts: [approval('rita', HEAD, { dismissed: true })] }),
      prod,
      'failed',
      false,
      [],
      /dismissed/,
    ],
    [
      'changes requested after approving',
      pr({ verdicts: [{ ...approval('rita'), state: 'changes-requested' }] }),
      prod,
      'failed',
      false,
      [],
      /merged without an approving review/,
    ],
    [
      'an approval that is not official',
      pr({ verdicts: [approval('passer-by', HEAD, { official: false })] }),
      prod,
      'failed',
      false,
      [],
      /not an official review/,
    ],
    [
      'an approval without its commit',
      pr({ verdicts: [approval('rita', HEAD, { commit: undefined })] }),
      prod,
      'failed',
      false,
      [],
      /does not say which commit/,
    ],
    [
      'the only approver, who pushed a commit to the change, merges it',
      pr({ mergedBy: 'rita', contributors: ['dev', 'rita'] }),
      prod,
      'failed',
      false,
      [],
      /merged by rita, its only approver, who wrote the change: no review/,
    ],
    [
      'one stale and one valid approval',
      pr({ verdicts: [approval('sam', OLD), approval('rita')] }),
      prod,
      'ok',
      true,
      ['rita'],
      undefined,
    ],
    [
      'no review where review is not required: ok, and not reviewed',
      pr({ verdicts: [approval('rita', OLD)] }),
      dev,
      'ok',
      false,
      [],
      /no approval that counts/,
    ],
    [
      "a rebase-merge (the merge commit's second parent is a rebased copy): the forge's head ref",
      pr(),
      { ...prod, parents: [BASE, MOVED] },
      'ok',
      true,
      ['rita'],
      undefined,
    ],
    [
      "no head ref on the forge: the merge commit's second parent",
      pr({ headCommit: undefined, verdicts: [approval('rita', MOVED)] }),
      { ...prod, parents: [BASE, MOVED] },
      'ok',
      true,
      ['rita'],
      undefined,
    ],
    ['a squash merge: the forge head ref', pr(), { ...prod, parents: [BASE] }, 'ok', true, ['rita'], undefined],
    [
      'an app following HEAD: the default branch',
      pr({ defaultBranch: 'trunk', baseBranch: 'trunk' }),
      { ...prod, branch: 'HEAD' },
      'ok',
      true,
      ['rita'],
      undefined,
    ],
    [
      'the head commit cannot be read',
      pr({ headCommit: undefined }),
      { ...prod, parents: [BASE] },
      'unknown',
      false,
      [],
      /head commit pull request #7 merged could not be read/,
    ],
    [
      'who wrote the commits cannot be read',
      pr({ contributors: undefined }),
      prod,
      'unknown',
      false,
      [],
      /who wrote the commits/,
    ],
    ['an app following no branch', pr(), { ...prod, branch: null }, 'unknown', false, [], /follows no branch/],
  ] as const)('%s → %s', (_, facts, input, status, reviewed, approvers, reason) => {
    const d = decidePullRequestReview(facts, { ...input, parents: [...input.parents] });
    expect(d.status).toBe(status);
    expect(d.reviewed).toBe(reviewed);
    expect(d.counted.map((a) => a.login)).toEqual(approvers);
    if (reason) expect(d.reason).toMatch(reason);
    else expect(d.reason).toBeUndefined();
    // every verdict is accounted for: counted, or not counted with why
    expect(d.counted.length + d.notCounted.length).toBe(facts.verdicts.length);
  });

  it('keeps what was checked: the head commit, the branch, and why each approval did not count', () => {
    const d = decidePullRequestReview(
      pr({ verdicts: [approval('dev'), approval('sam', OLD), approval('rita')] }),
      prod,
    );
    expect(d).toMatchObject({ branch: 'main', headCommit: HEAD, counted: [{ login: 'rita', commit: HEAD }] });
    expect(d.notCounted).toEqual([
      { login: 'dev', why: "the pull request's author", commit: HEAD, at: '2026-12-01T09:00:00Z' },
      { login: 'sam', why: expect.stringMatching(/not the merged head/), commit: OLD, at: '2026-12-01T09:00:00Z' },
    ]);
  });

  it('on a wrong base, even a valid approval is named as not counted', () => {
    const d = decidePullRequestReview(pr({ baseBranch: 'release' }), prod);
    expect(d.notCounted).toEqual([
      expect.objectContaining({ login: 'rita', why: 'approved a merge into release, not main' }),
    ]);
  });
});

describe('a direct push (the forge knows no pull request that merged it)', () => {
  it('a Reviewed-by trailer is named and not counted: failed where review is required', () => {
    const d = decideDirectPush(['Bob'], { reviewRequired: true, host: 'git.example.com', env: 'prod' });
    expect(d.status).toBe('failed');
    expect(d.reviewed).toBe(false);
    expect(d.reason).toMatch(
      /^direct push: no pull request on git\.example\.com merged this commit; its message names Bob/,
    );
    expect(d.reason).toMatch(/prod requires review$/);
    expect(d.notCounted).toEqual([expect.objectContaining({ login: 'Bob', why: expect.stringMatching(/trailer/) })]);
  });
  it('elsewhere ok, and not reviewed', () => {
    const d = decideDirectPush([], { reviewRequired: false, host: 'git.example.com', env: 'dev' });
    expect(d).toMatchObject({ status: 'ok', reviewed: false, notCounted: [] });
  });
});

describe('the branch an app follows', () => {
  it.each([
    [`main@sha1:${HEAD}`, undefined, 'main'],
    [`refs/heads/release/1@sha1:${HEAD}`, 'release/1', 'release/1'],
    [`sha1:${HEAD}`, HEAD, null],
    [HEAD, 'main', 'main'],
    [HEAD, 'HEAD', 'HEAD'],
    [HEAD, HEAD, null],
    [HEAD, undefined, null],
  ] as const)('%s (ref %s) → %s', (revision, ref, branch) => {
    expect(followedBranch(revision, ref)).toBe(branch);
  });
});
