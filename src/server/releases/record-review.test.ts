// The review state as recorded, through the real Gitea adapter and forge directory over a fake Gitea API: a
// commit message proves nothing, and an approval counts only from someone other than the change's authors, on
// the merged head, into the branch the app follows. Each record keeps what was checked.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { App } from '../../domain/app.ts';
import { forgeDirectory } from '../forge/forge-directory.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';
import { recordReview } from './record-review.ts';
import type { StateContext, Tracked } from './tracking.ts';

const BASE = 'b'.repeat(40);
const HEAD = 'c'.repeat(40);
const OLD = 'e'.repeat(40);
const MERGE = 'a'.repeat(40);
const HOST = '127.0.0.1:9';
const API = `http://${HOST}/api/v1/repos/platform/app`;

interface FakePr {
  number: number;
  author: string;
  mergedBy: string;
  base: string;
  /** refs/pull/<n>/head: the head the merge took */
  mergedHead: string;
  reviews: Array<{ login: string; state: string; commit: string; official?: boolean; dismissed?: boolean }>;
  /** authors and committers of the pull request's commits */
  commits: Array<{ author: string; committer: string }>;
}

/** The Gitea API v1 as the adapter reads it, for one repository holding MERGE. */
function fakeGitea(pr: FakePr | undefined, hasCommit = true): typeof fetch {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  return (async (input: string | URL | Request) => {
    const u = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const path = `${u.origin}${u.pathname}`;
    const page = Number(u.searchParams.get('page') ?? '1');
    if (path === `${API}/commits/${MERGE}/pull`)
      return pr
        ? json(200, {
            number: pr.number,
            html_url: `http://${HOST}/platform/app/pulls/${pr.number}`,
            title: 'a change',
            user: { login: pr.author },
            merged: true,
            merged_at: '2026-12-01T10:00:00Z',
            merged_by: { login: pr.mergedBy },
            merge_commit_sha: MERGE,
            base: { ref: pr.base, repo: { default_branch: 'main' } },
            // the branch moved on after the merge: head.sha is not what was merged
            head: { ref: 'feature', sha: 'f'.repeat(40) },
          })
        : json(404, { message: 'not found' });
    if (path === `${API}/git/commits/${MERGE}`)
      return hasCommit ? json(200, { sha: MERGE }) : json(404, { message: 'not found' });
    if (pr && path === `${API}/git/refs/pull/${pr.number}/head`)
      return json(200, { ref: `refs/pull/${pr.number}/head`, object: { sha: pr.mergedHead, type: 'commit' } });
    if (pr && path === `${API}/pulls/${pr.number}/reviews`)
      return json(
        200,
        page > 1
          ? []
          : pr.reviews.map((r, i) => ({
              id: i + 1,
              user: { login: r.login },
              state: r.state,
              commit_id: r.commit,
              official: r.official ?? true,
              dismissed: r.dismissed ?? false,
              stale: r.commit !== pr.mergedHead,
              submitted_at: `2026-12-01T09:0${i}:00Z`,
            })),
      );
    if (pr && path === `${API}/pulls/${pr.number}/commits`)
      return json(
        200,
        page > 1
          ? []
          : pr.commits.map((c, i) => ({
              sha: String(i).repeat(40),
              author: { login: c.author },
              committer: { login: c.committer },
            })),
      );
    return json(404, { message: `no route ${u.pathname}` });
  }) as typeof fetch;
}

function app(env: string): App {
  return {
    id: `c1/flux-system/kustomization/app-${env}`,
    cluster: 'c1',
    controller: 'flux',
    kind: 'Kustomization',
    namespace: 'flux-system',
    name: `app-${env}`,
    env,
    source: {
      kind: 'GitRepository',
      url: `http://${HOST}/platform/app.git`,
      ref: 'main',
      revisionWanted: `main@sha1:${MERGE}`,
    },
    automation: { autoSync: true, selfHeal: true, prune: true, suspended: false },
    sync: 'Synced',
    health: 'Healthy',
    healthMessage: '',
    conditions: [],
    inventory: [],
    warnings: [],
  };
}

async function review(opts: {
  env?: string;
  forge: boolean;
  pr?: FakePr;
  hasCommit?: boolean;
  commit: { parents: readonly string[]; message: string };
}): Promise<{ actor: string; data: Record<string, unknown> }> {
  const emitted: Array<{ actor: string; data: Record<string, unknown> }> = [];
  const forges = opts.forge
    ? forgeDirectory(
        { [HOST]: { kind: 'gitea', token: 'test-token' } },
        { fetch: fakeGitea(opts.pr, opts.hasCommit ?? true) },
      )
    : undefined;
  const ctx: StateContext = {
    o: { forges, reviewRequiredEnvs: ['prod'] } as unknown as ReleaseRecorderOptions,
    emit: (_app, _rel, state, actor, data) => {
      if (state === 'review') emitted.push({ actor, data });
    },
    emitOther: () => undefined,
  };
  const rel: Tracked = {
    sha: MERGE,
    revision: `main@sha1:${MERGE}`,
    seenAt: Date.now(),
    recorded: new Map(),
    commit: { parents: [...opts.commit.parents], message: opts.commit.message },
  };
  await recordReview(ctx, app(opts.env ?? 'prod'), rel);
  expect(emitted).toHaveLength(1);
  return emitted[0] as { actor: string; data: Record<string, unknown> };
}

const pr = (over: Partial<FakePr> = {}): FakePr => ({
  number: 7,
  author: 'dev',
  mergedBy: 'dev',
  base: 'main',
  mergedHead: HEAD,
  reviews: [{ login: 'rita', state: 'APPROVED', commit: HEAD }],
  commits: [{ author: 'dev', committer: 'dev' }],
  ...over,
});
const merged = { parents: [BASE, HEAD], message: "Merge pull request 'a change' (#7)" };

beforeEach(() => {
  // the sandbox-style forge on a loopback address is allowed by the console's URL policy only when listed
  vi.stubEnv('CONSOLE_GIT_ALLOW_HOSTS', '127.0.0.1');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the review state (record-review)', () => {
  it.each([
    [
      'no forge: a direct push whose author wrote Reviewed-by: Bob',
      { forge: false, commit: { parents: [BASE], message: 'hotfix\n\nReviewed-by: Bob <bob@example.com>' } },
      'unknown',
      /^no forge configured: a commit message cannot prove a review$/,
    ],
    [
      'no forge: a merge commit only',
      { forge: false, commit: merged },
      'unknown',
      /^no forge configured: a commit message cannot prove a review$/,
    ],
    [
      'forge: a direct push with a Reviewed-by trailer, in prod',
      { forge: true, commit: { parents: [BASE], message: 'hotfix\n\nReviewed-by: Bob' } },
      'failed',
      /^direct push: no pull request on 127\.0\.0\.1:9 merged this commit; its message names Bob/,
    ],
    [
      'forge: an approval by the pull request author',
      {
        forge: true,
        pr: pr({ mergedBy: 'ops', reviews: [{ login: 'dev', state: 'APPROVED', commit: HEAD }] }),
        commit: merged,
      },
      'failed',
      /dev \(the pull request's author\)/,
    ],
    [
      'forge: an approval given before a later push (stale)',
      { forge: true, pr: pr({ reviews: [{ login: 'rita', state: 'APPROVED', commit: OLD }] }), commit: merged },
      'failed',
      /rita \(approved eeeeeeee, not the merged head cccccccc/,
    ],
    [
      'forge: a pull request into another branch',
      { forge: true, pr: pr({ base: 'experiment' }), commit: merged },
      'failed',
      /merged into experiment, not main, the branch the app follows/,
    ],
    [
      'forge: the only approver pushed to the change, approved it and merged it',
      {
        forge: true,
        pr: pr({
          mergedBy: 'rita',
          commits: [
            { author: 'dev', committer: 'dev' },
            { author: 'rita', committer: 'rita' },
          ],
        }),
        commit: merged,
      },
      'failed',
      /merged by rita, its only approver, who wrote the change: no review/,
    ],
    [
      'forge: the commit is not on the forge (a 404 is also "no access")',
      { forge: true, hasCommit: false, commit: { parents: [BASE], message: 'x' } },
      'unknown',
      /is not in platform\/app on 127\.0\.0\.1:9/,
    ],
    ['forge: a valid approval on the merged head', { forge: true, pr: pr(), commit: merged }, 'ok', undefined],
  ] as const)('%s → %s', async (_, o, status, reason) => {
    const r = await review(o);
    expect(r.data.status ?? 'ok').toBe(status);
    if (reason) expect(r.data.reason).toMatch(reason);
    else expect(r.data.reason).toBeUndefined();
    if (status !== 'ok') expect(r.data.approvers).toEqual([]);
  });

  it('a valid review keeps what was checked: the pull request, its author, the head sha, who counted and who not', async () => {
    const r = await review({
      forge: true,
      pr: pr({
        reviews: [
          { login: 'sam', state: 'APPROVED', commit: OLD },
          { login: 'rita', state: 'APPROVED', commit: HEAD },
          { login: 'passer-by', state: 'APPROVED', commit: HEAD, official: false },
        ],
      }),
      commit: merged,
    });
    expect(r.actor).toBe('dev');
    expect(r.data).toMatchObject({
      source: 'forge',
      forge: 'gitea 127.0.0.1:9',
      branch: 'main',
      reviewRequired: true,
      reviewed: true,
      status: 'ok',
      pullRequest: { number: 7, author: 'dev', mergedBy: 'dev', baseBranch: 'main', headCommit: HEAD },
      approvers: ['rita'],
      approvals: [{ login: 'rita', commit: HEAD }],
      notCounted: [
        { login: 'sam', commit: OLD, why: expect.stringMatching(/not the merged head/) },
        { login: 'passer-by', why: expect.stringMatching(/not an official review/) },
      ],
      contributors: ['dev'],
    });
  });

  it('where review is not required, no review is ok and says it is not reviewed', async () => {
    const r = await review({
      env: 'dev',
      forge: true,
      pr: pr({ reviews: [{ login: 'rita', state: 'APPROVED', commit: OLD }] }),
      commit: merged,
    });
    expect(r.data).toMatchObject({ status: 'ok', reviewed: false, reviewRequired: false, approvers: [] });
    expect(r.data.reason).toMatch(/no approval that counts/);
  });

  it('a squash merge (one parent): the head is the pull request ref the merge froze, not the moved branch', async () => {
    const r = await review({ forge: true, pr: pr(), commit: { parents: [BASE], message: 'a change (#7)' } });
    expect(r.data).toMatchObject({ status: 'ok', reviewed: true, pullRequest: { headCommit: HEAD } });
  });
});
