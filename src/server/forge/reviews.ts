// What a forge says about how a commit was reviewed: the pull request whose merge produced it, the head commit
// that pull request merged (its `refs/pull/<n>/head`, which Gitea stops moving at the merge — the pull request's
// `head.sha` follows the branch, which can move on after it), each reviewer's latest verdict with the commit it
// was given on, and who authored or committed the pull request's commits. Read-only, through Forge.getJson (the
// token stays in the adapter); the shapes are Gitea API v1's (GitHub REST v3's). The decision is the domain's
// (domain/release-review.ts). One commit is often the release of several apps (a monorepo's environments), so an
// answer is kept a minute per commit.
import type { PullRequestFacts, ReviewVerdict } from '../../domain/release-review.ts';
import { failure, type Forge, type ForgeResult, type RepoRef } from './forge.ts';

import { mergedPullRequestFields, obj, s, type Json } from './gitea-json.ts';

/** a page of a list; Gitea caps pages at its MAX_RESPONSE_ITEMS (50 by default) */
const PAGE = 50;
/** lists longer than this many pages are not read (the review is then unknown, with why) */
const MAX_PAGES = 20;
const KEEP_MS = 60_000;

const kept = new WeakMap<Forge, Map<string, { at: number; answer: Promise<ForgeResult<PullRequestFacts | null>> }>>();

const repoPath = (repo: RepoRef) => `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;

/** Every page of a list, or why not (a forge error, or more than MAX_PAGES pages). */
async function allPages(get: (path: string) => Promise<ForgeResult<unknown>>, path: string, what: string) {
  const out: Json[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const r = await get(`${path}${path.includes('?') ? '&' : '?'}page=${page}&limit=${PAGE}`);
    if (!r.ok) return r;
    const items = Array.isArray(r.value) ? r.value.map(obj) : [];
    if (!items.length) return { ok: true as const, value: out };
    out.push(...items);
  }
  return failure<Json[]>('refused', `more than ${MAX_PAGES * PAGE} ${what}: not read in full`);
}

/** Each reviewer's latest verdict: comments and pending or requested reviews do not change it (as on GitHub). */
export function latestVerdicts(reviews: unknown[]): ReviewVerdict[] {
  const latest = new Map<string, ReviewVerdict>();
  for (const rv of reviews.map(obj)) {
    const state = s(rv.state).toUpperCase();
    const verdict = state === 'APPROVED' ? 'approved' : state === 'REQUEST_CHANGES' ? 'changes-requested' : undefined;
    const login = s(obj(rv.user).login);
    if (!verdict || !login) continue;
    latest.delete(login); // keep the map in the order of the latest verdicts
    latest.set(login, {
      login,
      state: verdict,
      ...(s(rv.commit_id) ? { commit: s(rv.commit_id) } : {}),
      ...(s(rv.submitted_at) ? { at: s(rv.submitted_at) } : {}),
      dismissed: rv.dismissed === true,
      ...(typeof rv.official === 'boolean' ? { official: rv.official } : {}),
    });
  }
  return [...latest.values()];
}

async function read(forge: Forge, repo: RepoRef, sha: string): Promise<ForgeResult<PullRequestFacts | null>> {
  const getJson = forge.getJson?.bind(forge);
  if (!getJson) return failure('refused', `the ${forge.kind} adapter does not read reviews`);
  const base = repoPath(repo);
  const found = await getJson(`${base}/commits/${sha}/pull`);
  if (!found.ok && found.state !== 'not-found') return found;
  const pr = found.ok ? obj(found.value) : {};
  if (pr.merged !== true) {
    // no merged pull request: a direct push, if the forge has the commit at all (a 404 also means "no access")
    const commit = await getJson(`${base}/git/commits/${sha}`);
    if (commit.ok) return { ok: true, value: null };
    return commit.state === 'not-found'
      ? failure('not-found', `commit ${sha.slice(0, 8)} is not in ${repo.owner}/${repo.name} on ${repo.host}`)
      : commit;
  }
  const number = Number(pr.number);
  if (!Number.isInteger(number) || number < 1) return failure('refused', 'the forge named no pull request number');

  // the head the merge took; absent (not-found) when the forge keeps no such ref
  const ref = await getJson(`${base}/git/refs/pull/${number}/head`);
  if (!ref.ok && ref.state !== 'not-found') return ref;
  const refs = ref.ok ? (Array.isArray(ref.value) ? ref.value.map(obj) : [obj(ref.value)]) : [];
  const headRef = refs.find((x) => s(x.ref) === `refs/pull/${number}/head`);
  const headCommit = s(obj(headRef?.object).sha);

  const reviews = await allPages(getJson, `${base}/pulls/${number}/reviews`, 'reviews');
  if (!reviews.ok) return reviews;
  // who wrote the change: a commit's author and committer, as forge users (an unknown email names no one)
  const commits = await allPages(getJson, `${base}/pulls/${number}/commits?verification=false&files=false`, 'commits');
  if (!commits.ok && commits.state !== 'refused') return commits;
  const contributors = commits.ok
    ? [
        ...new Set(
          commits.value.flatMap((c) => [s(obj(c.author).login), s(obj(c.committer).login)]).filter((l) => l !== ''),
        ),
      ]
    : undefined;

  const value: PullRequestFacts = {
    ...mergedPullRequestFields(pr, number, sha),
    ...(/^[0-9a-f]{40,64}$/.test(headCommit) ? { headCommit } : {}),
    ...(s(obj(obj(pr.base).repo).default_branch) ? { defaultBranch: s(obj(obj(pr.base).repo).default_branch) } : {}),
    verdicts: latestVerdicts(reviews.value),
    contributors,
  };
  return { ok: true, value };
}

/**
 * The pull request whose merge produced `sha`, with what its review is decided on; `null` when no pull request
 * merged it (a direct push). Failures are the forge's (unreachable, refused), never thrown.
 */
export async function pullRequestReviewOf(
  forge: Forge,
  repo: RepoRef,
  sha: string,
): Promise<ForgeResult<PullRequestFacts | null>> {
  if (!/^[0-9a-f]{7,64}$/i.test(sha)) return failure('refused', 'not a commit id');
  let byCommit = kept.get(forge);
  if (!byCommit) kept.set(forge, (byCommit = new Map()));
  const key = `${repo.host}/${repo.owner}/${repo.name}@${sha}`;
  const now = Date.now();
  for (const [k, v] of byCommit) if (now - v.at > KEEP_MS) byCommit.delete(k);
  const hit = byCommit.get(key);
  if (hit) return hit.answer;
  const answer = read(forge, repo, sha);
  byCommit.set(key, { at: now, answer });
  // only an answer is kept: a failure is asked again next time
  answer.then(
    (r) => {
      if (!r.ok) byCommit.delete(key);
    },
    () => byCommit.delete(key),
  );
  return answer;
}
