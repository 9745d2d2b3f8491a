// Scenario helpers for the forge, the registry and the business endpoints
// (re-exported by scenario.ts): open a PR, approve it, merge it; push directly
// to a branch; move an image tag to another digest; make the forge or the
// registry unreachable and back; make a business endpoint fail or slow.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBusinessMode, type BusinessMode } from './business-endpoint.ts';
import type { ExtrasState } from './extras.ts';
import {
  forgeCredentials,
  forgeGit,
  forgeGitState,
  restartForge,
  stopForge,
  type ForgeRole,
  type ForgeState,
} from './forge.ts';
import { imagepush, moveTag, restartRegistry, stopRegistry, type RegistryState } from './registry.ts';
import { BIN_DIR, mustState, readState, writeState, type SandboxState } from './state.ts';

type Full = SandboxState & ExtrasState;
type Json = Record<string, unknown>;

const full = (): Full => mustState() as Full;

export function sandboxForge(st: Full = full()): ForgeState {
  if (!st.forge) throw new Error('the sandbox has no forge (bash sandbox/build.sh gitea, then npm run sandbox -- up)');
  return st.forge;
}

export function sandboxRegistry(st: Full = full()): RegistryState {
  if (!st.registry)
    throw new Error('the sandbox has no registry (bash sandbox/build.sh registry, then npm run sandbox -- up)');
  return st.registry;
}

/** A forge user's name and API token (tests only; never print it). */
export function forgeUser(role: ForgeRole, forge = sandboxForge()): { username: string; token: string } {
  const u = forgeCredentials(forge).users[role];
  return { username: u.username, token: u.token };
}

/** Calls the forge API as one of the sandbox users. */
export async function forgeApi(
  role: ForgeRole,
  method: string,
  path: string,
  body?: unknown,
  forge = sandboxForge(),
): Promise<{ status: number; json: Json & Json[] }> {
  const r = await fetch(`${forge.url}/api/v1${path}`, {
    method,
    headers: {
      accept: 'application/json',
      authorization: `token ${forgeUser(role, forge).token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await r.text();
  return { status: r.status, json: (text ? JSON.parse(text) : {}) as Json & Json[] };
}

const repoPath = (forge: ForgeState) => `/repos/${forge.repo.owner}/${forge.repo.name}`;

/**
 * Clones the forge's seed repo as `as`, lets `edit` change the work tree, commits and pushes to
 * `branch` (created from main when new). A refused push (protected branch) is an answer, not a throw.
 */
export function pushToForge(
  branch: string,
  message: string,
  edit: (workTree: string) => void,
  as: ForgeRole = 'developer',
  forge = sandboxForge(),
): { ok: true; sha: string } | { ok: false; error: string } {
  const user = forgeUser(as, forge);
  const work = mkdtempSync(join(tmpdir(), 'forge-edit-'));
  try {
    forgeGit(['clone', '-q', forge.repo.cloneUrl, work], tmpdir(), user);
    const g = (args: string[]) =>
      forgeGit(
        ['-c', `user.name=${user.username}`, '-c', `user.email=${user.username}@sandbox.invalid`, ...args],
        work,
        user,
      );
    if (branch !== 'main') g(['checkout', '-q', '-B', branch]);
    edit(work);
    g(['add', '-A']);
    g(['commit', '-q', '--allow-empty', '-m', message]);
    const sha = g(['rev-parse', 'HEAD']).trim();
    try {
      g(['push', '-q', 'origin', `HEAD:refs/heads/${branch}`]);
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
    return { ok: true, sha };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Pushes a branch with `edit` and opens a pull request into main, as `as`. */
export async function openForgePullRequest(opts: {
  branch: string;
  title: string;
  edit: (workTree: string) => void;
  as?: ForgeRole;
  forge?: ForgeState;
}): Promise<{ number: number; headSha: string }> {
  const forge = opts.forge ?? sandboxForge();
  const pushed = pushToForge(opts.branch, opts.title, opts.edit, opts.as ?? 'developer', forge);
  if (!pushed.ok) throw new Error(pushed.error);
  const r = await forgeApi(
    opts.as ?? 'developer',
    'POST',
    `${repoPath(forge)}/pulls`,
    { base: 'main', head: opts.branch, title: opts.title, body: 'opened by a sandbox scenario' },
    forge,
  );
  if (r.status !== 201) throw new Error(`open PR: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
  return { number: Number(r.json.number), headSha: pushed.sha };
}

export async function approvePullRequest(number: number, as: ForgeRole = 'reviewer', forge = sandboxForge()) {
  const r = await forgeApi(
    as,
    'POST',
    `${repoPath(forge)}/pulls/${number}/reviews`,
    { event: 'APPROVED', body: 'Looks good (sandbox scenario)' },
    forge,
  );
  if (r.status !== 200)
    throw new Error(`approve PR ${number}: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
}

/** Merges (merge commit) as `as`; returns the merge commit, or the forge's refusal. */
export async function mergePullRequest(
  number: number,
  as: ForgeRole = 'developer',
  forge = sandboxForge(),
): Promise<{ ok: true; mergeCommit: string } | { ok: false; status: number; message: string }> {
  const r = await forgeApi(as, 'POST', `${repoPath(forge)}/pulls/${number}/merge`, { Do: 'merge' }, forge);
  if (r.status !== 200) return { ok: false, status: r.status, message: String(r.json.message ?? '') };
  const pr = await forgeApi(as, 'GET', `${repoPath(forge)}/pulls/${number}`, undefined, forge);
  return { ok: true, mergeCommit: String(pr.json.merge_commit_sha) };
}

/** The open pull request whose head is `branch` (e.g. a freeze write-back's), or undefined. */
export async function openPullRequestFor(
  branch: string,
  forge = sandboxForge(),
): Promise<{ number: number; author: string; headSha: string; base: string } | undefined> {
  const r = await forgeApi('developer', 'GET', `${repoPath(forge)}/pulls?state=open&limit=50`, undefined, forge);
  if (r.status !== 200) throw new Error(`list PRs: HTTP ${r.status}`);
  const pr = r.json.find((p) => (p.head as Json | undefined)?.ref === branch);
  if (!pr) return undefined;
  return {
    number: Number(pr.number),
    author: String((pr.user as Json | undefined)?.login ?? ''),
    headSha: String((pr.head as Json | undefined)?.sha ?? ''),
    base: String((pr.base as Json | undefined)?.ref ?? ''),
  };
}

/** Closes a pull request without merging it (test clean-up). */
export async function closePullRequest(number: number, forge = sandboxForge()): Promise<void> {
  await forgeApi('admin', 'PATCH', `${repoPath(forge)}/pulls/${number}`, { state: 'closed' }, forge);
}

/** The head commit of a forge branch. */
export async function forgeBranchHead(branch = 'main', forge = sandboxForge()): Promise<string> {
  const r = await forgeApi('developer', 'GET', `${repoPath(forge)}/branches/${branch}`, undefined, forge);
  return String((r.json.commit as Json | undefined)?.id ?? '');
}

function updateExtras(patch: Partial<ExtrasState>): void {
  const st = readState();
  if (st) writeState({ ...st, ...patch } as SandboxState);
}

export async function makeForgeUnreachable(): Promise<void> {
  await stopForge(sandboxForge());
}

export async function makeForgeReachable(): Promise<void> {
  const forge = await restartForge(sandboxForge());
  const st = readState();
  // state.git is the forge's repo (the clusters' Git source): its process record follows the restart
  if (st)
    writeState({
      ...st,
      forge,
      ...(st.git.url === forge.repo.cloneUrl ? { git: forgeGitState(forge) } : {}),
    } as SandboxState);
}

export async function makeRegistryUnreachable(): Promise<void> {
  await stopRegistry(sandboxRegistry());
}

export async function makeRegistryReachable(): Promise<void> {
  updateExtras({ registry: await restartRegistry(sandboxRegistry()) });
}

/** Points `repo:tag` at `from` (another tag, or a `sha256:` digest); returns the new digest. */
export function moveImageTag(repo: string, tag: string, from: string): string {
  return moveTag(sandboxRegistry(), BIN_DIR, repo, tag, from);
}

/** Builds and pushes a new image `repo:tag` (its own digest: its one layer names repo and tag); returns the digest. */
export function pushNewImage(repo: string, tag: string): string {
  const [img] = imagepush(BIN_DIR, ['push', '--registry', sandboxRegistry().host, `${repo}:${tag}`]);
  if (!img?.digest) throw new Error(`imagepush pushed nothing for ${repo}:${tag}`);
  return img.digest;
}

export function businessEndpointUrl(env: string): string {
  const e = full().business?.endpoints[env];
  if (!e) throw new Error(`no business endpoint for ${env}`);
  return e.url;
}

/** Makes an environment's business endpoint answer normally, fail (503 or `status`) or slowly. */
export function setBusinessEndpoint(env: string, mode: BusinessMode): void {
  const b = full().business;
  if (!b) throw new Error('the sandbox has no business endpoints');
  writeBusinessMode(b.controlDir, env, mode);
}
