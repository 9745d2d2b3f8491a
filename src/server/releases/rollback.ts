// Rollback (issue 16): from an earlier release row, a developer opens a pull request that puts the environment's
// directory (the app's source path) back to that release's commit — never a direct push. The plan is read from
// the repository (a bare mirror under the data dir): files to restore, create or delete under the path, and the
// files outside it that changed since (shared with other environments: named, not reverted). The intent is
// evidence before the forge is asked (fails closed); the outcome names the pull request. Intent only for what may
// happen: every check runs before the intent, and what it refuses (404/409: no recorded release, no forge, a branch
// or path a pull request cannot take, nothing to roll back) is one `action.refused` record naming the reason, never
// a `release.rollback-requested`; bad input (400) and Git down (502) refuse nothing and record nothing.
import { join } from 'node:path';
import type { App } from '../../domain/app.ts';
import { shaOf } from '../../domain/release-commit.ts';
import { normalizeRepoPath } from '../../domain/repo-path.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import type { Principal } from '../auth/index.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { ForgeDirectory } from '../forge/forge-directory.ts';
import type { FileChange, Forge, OpenedPullRequest, RepoRef } from '../forge/forge.ts';
import { git, GitMirrors } from '../git/mirror.ts';
import { HttpError, localDiskError } from '../http/errors.ts';
import type { EvidenceStore } from '../evidence/index.ts';

/** more differing files than this is not one reviewable pull request */
const MAX_FILES = 200;

/** Every rollback pull request's branch of `app` to the release `short` begins so (then a time, base 36). */
export const rollbackBranchPrefix = (app: string, short: string): string => `rollback/${app}-${short}-`;

export interface RollbackPlan {
  branch: string;
  /** the branch head the pull request is based on */
  fromSha: string;
  targetSha: string;
  path: string;
  files: FileChange[];
  /** files outside the path that differ between the head and the target (not reverted) */
  outside: string[];
}

export interface RollbackResult {
  pullRequest: OpenedPullRequest;
  plan: Omit<RollbackPlan, 'files'> & { files: Array<{ path: string; change: 'restore' | 'delete' }> };
  intentSeq: number;
  /** the rollback pull request to this release was already open (an earlier request's): nothing new was opened */
  existing?: true;
}

/**
 * `./overlays/dev/` → `overlays/dev`; empty or `.` → the whole repository (the product's one rule,
 * normalizeRepoPath: `a/../b` → `b`). A path that leaves the repository is a 409.
 */
export function normalizePath(p: string | undefined): string {
  const n = normalizeRepoPath(p ?? '');
  if (n === undefined) throw new HttpError(409, 'Conflict', `the app's path ${p} leaves the repository`);
  return n;
}

/** `git diff --name-status -z` output → [status, path] pairs (renames are off: --no-renames). */
export function parseNameStatus(out: string): Array<{ status: string; path: string }> {
  const parts = out.split('\0').filter((x) => x !== '');
  const res: Array<{ status: string; path: string }> = [];
  for (let i = 0; i + 1 < parts.length; i += 2) res.push({ status: parts[i] as string, path: parts[i + 1] as string });
  return res;
}

/** `path` itself or a file under it (the literal prefix a pathspec of the directory matches). */
const isUnder = (file: string, path: string) => !path || file === path || file.startsWith(`${path}/`);

/**
 * The plan, read from the bare repository `dir`. Every path goes to git literally (`--literal-pathspecs`): an
 * app path such as `:/`, `:(top)` or `*` names a directory of that name, never pathspec magic that would widen
 * the rollback to the whole repository.
 */
export async function readPlan(
  dir: string,
  p: { branch: string; targetSha: string; path: string; shown: string },
): Promise<RollbackPlan> {
  const { branch, targetSha, path, shown } = p;
  const lit = (args: string[]) => git(['--literal-pathspecs', '-C', dir, ...args]);
  const fromSha = (
    await lit(['rev-parse', '--verify', `refs/heads/${branch}^{commit}`]).catch(() => {
      throw new HttpError(409, 'Conflict', `${shown} has no branch ${branch}: a pull request needs one`);
    })
  ).trim();
  await lit(['cat-file', '-e', `${targetSha}^{commit}`]).catch(() => {
    throw new HttpError(404, 'NotFound', `commit ${targetSha.slice(0, 12)} is not in ${shown}`);
  });
  const changed = parseNameStatus(
    await lit(['diff', '--no-renames', '--name-status', '-z', fromSha, targetSha, '--', ...(path ? [path] : [])]),
  ).filter((c) => isUnder(c.path, path));
  if (changed.length > MAX_FILES)
    throw new HttpError(
      409,
      'Conflict',
      `${changed.length} files differ under ${path || '.'}: more than ${MAX_FILES}, too many for one reviewable rollback pull request`,
    );
  const files: FileChange[] = [];
  for (const c of changed) {
    if (c.status.startsWith('D')) {
      files.push({ path: c.path, content: '', delete: true });
      continue;
    }
    // regular text files only: a symlink, submodule or binary file would not survive a text commit
    const mode = (await lit(['ls-tree', targetSha, '--', c.path])).split(' ')[0];
    // `<rev>:<path>` names the path as it is (only a leading ./ or ../ would be read relative, and git's own
    // output never starts with one)
    const content = await lit(['show', `${targetSha}:${c.path}`]);
    if ((mode !== '100644' && mode !== '100755') || content.includes('\0'))
      throw new HttpError(409, 'Conflict', `${c.path} is not a text file: roll it back by hand`);
    files.push({ path: c.path, content });
  }
  // everything else that differs (no exclude pathspec: the path is compared as a literal prefix here)
  const outside = path
    ? (await lit(['diff', '--no-renames', '--name-only', '-z', fromSha, targetSha]))
        .split('\0')
        .filter((f) => f && !isUnder(f, path))
    : [];
  return { branch, fromSha, targetSha, path: path || '.', files, outside };
}

export class RollbackService {
  private readonly mirrors: GitMirrors;

  constructor(
    private readonly deps: {
      recorder: EvidenceRecorder;
      store: EvidenceStore;
      forges: ForgeDirectory | undefined;
      dataDir: string;
    },
  ) {
    this.mirrors = GitMirrors.for(join(deps.dataDir, 'rollback-git'));
  }

  /** What a rollback to `targetSha` changes, read from the repository as it is now. */
  async plan(app: App, targetSha: string): Promise<RollbackPlan> {
    const url = app.source.url;
    if (!url) throw new HttpError(409, 'Conflict', `${app.name} names no Git source: nothing to roll back`);
    const shown = withoutUserInfo(url) ?? url;
    const branch =
      app.source.ref?.replace(/^refs\/heads\//, '') || app.source.revisionObserved?.split('@')[0] || 'main';
    if (!/^[\w./-]+$/.test(branch) || branch.startsWith('-') || branch === 'HEAD')
      throw new HttpError(409, 'Conflict', `the app follows ${branch}, not a named branch a pull request can target`);
    const path = normalizePath(app.source.path);
    try {
      return await this.mirrors.with(url, 'fetch', (dir) => readPlan(dir, { branch, targetSha, path, shown }));
    } catch (e) {
      if (e instanceof HttpError) throw e;
      // the console's own disk, not the repository (chaos: rollback-pr × disk-full)
      const disk = localDiskError(e);
      if (disk)
        throw new HttpError(
          503,
          'StoreUnavailable',
          `the console's disk refuses writes (${disk}): ${shown} cannot be read into its mirror; try again once it has room`,
          undefined,
          e instanceof Error ? e.message : String(e),
          5,
        );
      throw new HttpError(502, 'GitUnavailable', `cannot read ${shown}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * The checks that need no write, each a refusal: only a release the console recorded for this app (its evidence is
   * what the reviewer relies on), a forge for the repository (never a direct push), a plan the repository allows
   * (plan()), and something to roll back.
   */
  private async check(app: App, targetSha: string): Promise<{ forge: Forge; repo: RepoRef; plan: RollbackPlan }> {
    const changes = await this.deps.store.list({ app: app.id, type: ['release.change'], limit: 500 });
    if (!changes.some((e) => e.data.sha === targetSha))
      throw new HttpError(404, 'NotFound', `no recorded release ${targetSha.slice(0, 12)} of ${app.name}`);
    const found = app.source.url ? this.deps.forges?.forRepoUrl(app.source.url) : undefined;
    if (!found?.ok)
      throw new HttpError(
        409,
        'NoForge',
        `${found ? found.message : 'no forge configured'} for ${withoutUserInfo(app.source.url) ?? 'this app'}: a rollback opens a pull request, never a direct push`,
      );
    const { forge, repo } = found.value;
    const plan = await this.plan(app, targetSha);
    const live = shaOf(app.source.revisionObserved);
    if (!plan.files.length)
      throw new HttpError(
        409,
        'Conflict',
        `${plan.path} at ${targetSha.slice(0, 7)} is the same as on ${plan.branch} now${live === targetSha ? ' (it is the live release)' : ''}: nothing to roll back`,
      );
    return { forge, repo, plan };
  }

  /**
   * The open rollback pull request to the same release of the same app, when there is one; a forge that cannot say
   * (unreachable) is a 502: whether one is open is unknown, and opening another could make two.
   */
  private async openRollback(
    forge: Forge,
    repo: RepoRef,
    base: string,
    prefix: string,
  ): Promise<{ pr: OpenedPullRequest; intentSeq: number } | undefined> {
    if (!forge.openPullRequests) return undefined;
    const open = await forge.openPullRequests(repo, base, prefix);
    if (!open.ok)
      throw new HttpError(
        open.state === 'forge-unreachable' ? 502 : 409,
        open.state === 'forge-unreachable' ? 'ForgeUnreachable' : 'ForgeRefused',
        `cannot tell whether a rollback pull request is already open: ${open.message}`,
      );
    const [first] = open.value;
    if (!first) return undefined;
    const { body, ...pr } = first;
    return { pr, intentSeq: Number(/\(evidence #(\d+)\)/.exec(body)?.[1] ?? 0) };
  }

  async open(app: App, targetSha: string, reason: string, user: Principal): Promise<RollbackResult> {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(targetSha)) throw new HttpError(400, 'BadRequest', 'not a commit id');
    const r = reason.trim();
    if (!r) throw new HttpError(400, 'BadRequest', 'reason: say why this release is rolled back');
    if (r.length > 500) throw new HttpError(400, 'BadRequest', 'reason: at most 500 characters');
    const { forge, repo, plan } = await this.check(app, targetSha).catch(async (e: unknown) => {
      // a refusal (404/409) is one record naming it; a 502 (Git down) is no answer, so no refusal
      if (e instanceof HttpError && (e.status === 404 || e.status === 409))
        await this.deps.recorder.refuse({
          time: new Date().toISOString(),
          actor: user.name,
          app: app.id,
          cluster: app.cluster,
          env: app.env,
          action: 'release.rollback-requested',
          reason: e.message,
          data: { targetSha, refusal: e.code },
        });
      throw e;
    });
    const short = targetSha.slice(0, 7);
    const summary = {
      ...plan,
      files: plan.files.map((f) => ({ path: f.path, change: f.delete ? ('delete' as const) : ('restore' as const) })),
    };
    // a rollback to this release already open (a retry after a lost answer, a second person): that one, not a second
    const already = await this.openRollback(forge, repo, plan.branch, rollbackBranchPrefix(app.name, short));
    if (already) return { pullRequest: already.pr, plan: summary, intentSeq: already.intentSeq, existing: true };
    let intentSeq = 0;
    const pr = await this.deps.recorder.act(
      {
        time: new Date().toISOString(),
        type: 'release.rollback-requested',
        actor: user.name,
        app: app.id,
        cluster: app.cluster,
        env: app.env,
        data: {
          ...summary,
          files: summary.files.slice(0, 50),
          fileCount: summary.files.length,
          outside: summary.outside.slice(0, 50),
          outsideCount: summary.outside.length,
          reason: r,
          forge: `${forge.kind} ${repo.host}`,
          repo: `${repo.owner}/${repo.name}`,
        },
      },
      async (intent) => {
        intentSeq = intent.seq;
        const res = await forge.openPullRequest(repo, {
          baseBranch: plan.branch,
          branch: `${rollbackBranchPrefix(app.name, short)}${Date.now().toString(36)}`,
          title: `Roll back ${app.name} (${app.env}) to ${short}`,
          commitMessage: `Roll back ${plan.path} to ${short}\n\n${r}\n\nRequested-by: ${user.name}\nEvidence: #${intent.seq}`,
          body: [
            `Rolls \`${plan.path}\` on \`${plan.branch}\` back to release ${targetSha} of ${app.id}.`,
            '',
            `Reason: ${r}`,
            `Requested by ${user.name} in the GitOps console (evidence #${intent.seq}).`,
            '',
            ...summary.files.map((f) => `- ${f.change} \`${f.path}\``),
            ...(plan.outside.length
              ? [
                  '',
                  `Not reverted — outside \`${plan.path}\`, shared with other environments, changed since ${short}:`,
                  ...plan.outside.slice(0, 50).map((f) => `- \`${f}\``),
                ]
              : []),
          ].join('\n'),
          files: plan.files,
        });
        if (!res.ok)
          throw new HttpError(
            res.state === 'forge-unreachable' ? 502 : 409,
            res.state === 'forge-unreachable' ? 'ForgeUnreachable' : 'ForgeRefused',
            res.message,
          );
        return res.value;
      },
      (o) => (o.ok ? { pullRequest: { number: o.value.number, url: o.value.url, branch: o.value.branch } } : {}),
    );
    return { pullRequest: pr, plan: summary, intentSeq };
  }
}
