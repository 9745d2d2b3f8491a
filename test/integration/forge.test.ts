// Issue #15 acceptance, forge part: Gitea in the sandbox (protected main, one approving review)
// and the console's forge adapter (src/server/forge) against it.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadForgeDirectory, type ForgeDirectory } from '../../src/server/forge/forge-directory.ts';
import type { Forge, RepoRef } from '../../src/server/forge/forge.ts';
import {
  approvePullRequest,
  forgeApi,
  forgeBranchHead,
  forgeUser,
  makeForgeReachable,
  makeForgeUnreachable,
  mergePullRequest,
  openForgePullRequest,
  pushToForge,
  sandboxForge,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { mustState } from '../../sandbox/sandbox.ts';

const run = Date.now().toString(36);

function consoleForge(): { dir: ForgeDirectory; forge: Forge; repo: RepoRef } {
  const f = sandboxForge();
  const dir = loadForgeDirectory(f.consoleTokensFile);
  const r = dir.forRepoUrl(f.repo.cloneUrl);
  if (!r.ok) throw new Error(r.message);
  return { dir, ...r.value };
}

const secrets = () => {
  const f = sandboxForge();
  return (['admin', 'developer', 'reviewer', 'console'] as const).map((r) => forgeUser(r, f).token);
};
const expectNoToken = (v: unknown) => {
  const text = JSON.stringify(v);
  for (const t of secrets()) expect(text).not.toContain(t);
};

describe('forge (Gitea in the sandbox)', () => {
  afterAll(async () => {
    // a failed "forge down" test must not leave the forge stopped for the next file
    await makeForgeReachable();
  });

  it('runs Gitea 1.26 with the seed repo, main protected (pushes by the admin and the image automation bot only, one approval)', async () => {
    const f = sandboxForge();
    const v = (await (await fetch(`${f.url}/api/v1/version`)).json()) as { version: string };
    expect(v.version).toBe('1.26.0');
    const prot = await forgeApi('admin', 'GET', `/repos/${f.repo.owner}/${f.repo.name}/branch_protections/main`);
    expect(prot.status).toBe(200);
    expect(prot.json.required_approvals).toBe(1);
    // direct pushes: only the admin (the sandbox's scenario helpers) and Flux's image automation bot (dev's image
    // tag, sandbox/image-automation.ts); everyone else merges an approved PR
    expect(prot.json.enable_push).toBe(true);
    expect(prot.json.enable_push_whitelist).toBe(true);
    expect([...(prot.json.push_whitelist_usernames as string[])].sort()).toEqual([
      'flux-image-automation',
      'forge-admin',
    ]);
    // the repo the clusters' controllers fetch, anonymously (no credentials in their GitRepositories/Applications;
    // only the image automation's own GitRepository has a Secret, the bot's token, to push)
    expect(mustState().git.url).toBe(f.repo.cloneUrl);
    const repo = await fetch(`${f.url}/api/v1/repos/${f.repo.owner}/${f.repo.name}`);
    expect(repo.status).toBe(200);
    expect(((await repo.json()) as { private: boolean }).private).toBe(false);
    // tokens live in files only readable by their owner
    expect(statSync(f.credentialsFile).mode & 0o077).toBe(0);
    expect(statSync(f.consoleTokensFile).mode & 0o077).toBe(0);
    expect(readFileSync(join(f.dir, 'gitea.log'), 'utf8')).not.toContain(forgeUser('console').token);
    const seeded = await forgeApi(
      'developer',
      'GET',
      `/repos/${f.repo.owner}/${f.repo.name}/contents/overlays/prod?ref=main`,
    );
    expect(seeded.json.map((x) => x.name)).toEqual(['kustomization.yaml']);
  });

  it('refuses a direct push to the protected main branch', async () => {
    const before = await forgeBranchHead('main');
    const pushed = pushToForge(
      'main',
      'Direct push to main',
      (w) => writeRepoFile(w, 'README.md', '# pushed directly\n'),
      'developer',
    );
    expect(pushed.ok).toBe(false);
    if (!pushed.ok) expect(pushed.error).toMatch(/protected|not allowed to push|declined|rejected/i);
    expect(await forgeBranchHead('main')).toBe(before);
    // nor may the reviewer (only the admin is on the push whitelist)
    const reviewer = pushToForge('main', 'Reviewer push', (w) => writeRepoFile(w, 'x.txt', 'x\n'), 'reviewer');
    expect(reviewer.ok).toBe(false);
    expect(await forgeBranchHead('main')).toBe(before);
  });

  it('a PR opened, approved and merged shows up with its approver for the merge commit', async () => {
    const branch = `scale-dev-${run}`;
    const pr = await openForgePullRequest({
      branch,
      title: 'Scale dev session cache to 2',
      edit: (w) => {
        const p = join(w, 'overlays', 'dev', 'kustomization.yaml');
        const text = readFileSync(p, 'utf8').replace(/(name: session-cache\n\s+count: )\d+/, '$12');
        writeRepoFile(w, 'overlays/dev/kustomization.yaml', text);
      },
    });
    // no approval yet: Gitea refuses the merge
    const early = await mergePullRequest(pr.number, 'developer');
    expect(early.ok).toBe(false);
    await approvePullRequest(pr.number, 'reviewer');
    const merged = await mergePullRequest(pr.number, 'developer');
    expect(merged).toMatchObject({ ok: true });
    if (!merged.ok) return;
    expect(await forgeBranchHead('main')).toBe(merged.mergeCommit);

    const { forge, repo } = consoleForge();
    const found = await forge.mergedPullRequest(repo, merged.mergeCommit);
    if (!found.ok) throw new Error(`the forge adapter failed: ${found.state}: ${found.message}`);
    if (!found.value) throw new Error('no PR found for the merge commit');
    expect(found.value.number).toBe(pr.number);
    expect(found.value.author).toBe('developer');
    expect(found.value.mergeCommit).toBe(merged.mergeCommit);
    expect(found.value.approvers.map((a) => a.login)).toEqual(['reviewer']);
    expect(found.value.approvers[0]?.commit).toBe(pr.headSha);
    expect(Date.parse(found.value.mergedAt)).toBeGreaterThan(Date.now() - 10 * 60_000);
    expectNoToken(found);

    // a commit no PR merged: null, not an error
    const head = await forge.mergedPullRequest(repo, pr.headSha);
    expect(head).toEqual({ ok: true, value: null });
  });

  it('the adapter opens a PR with a one-line change and posts a commit status', async () => {
    const { forge, repo } = consoleForge();
    const f = sandboxForge();
    const path = 'overlays/staging/kustomization.yaml';
    const current = await (
      await fetch(`${f.url}/api/v1/repos/${f.repo.owner}/${f.repo.name}/raw/${path}?ref=main`, {
        headers: { authorization: `token ${forgeUser('console').token}` },
      })
    ).text();
    const next = current.replace('LOG_LEVEL=debug', 'LOG_LEVEL=info');
    expect(next).not.toBe(current);
    const opened = await forge.openPullRequest(repo, {
      baseBranch: 'main',
      branch: `console/log-level-${run}`,
      title: 'staging: LOG_LEVEL info',
      body: 'Opened by the GitOps console (write-back).',
      commitMessage: 'staging: LOG_LEVEL info',
      files: [{ path, content: next }],
    });
    expect(opened.ok ? opened : opened.message).toMatchObject({ ok: true });
    if (!opened.ok) return;
    expectNoToken(opened);
    const pr = await forgeApi('developer', 'GET', `/repos/${f.repo.owner}/${f.repo.name}/pulls/${opened.value.number}`);
    expect(pr.json.state).toBe('open');
    expect((pr.json.user as { login: string }).login).toBe('gitops-console');
    const files = await forgeApi(
      'developer',
      'GET',
      `/repos/${f.repo.owner}/${f.repo.name}/pulls/${opened.value.number}/files`,
    );
    expect(files.json.map((x) => [x.filename, x.additions, x.deletions])).toEqual([[path, 1, 1]]);

    const posted = await forge.setCommitStatus(repo, opened.value.headCommit, {
      state: 'success',
      context: 'gitops-console/staging',
      description: 'deployed to staging, healthy, verified',
    });
    expect(posted).toEqual({ ok: true, value: undefined });
    const statuses = await forge.commitStatuses(repo, opened.value.headCommit);
    expect(statuses.ok && statuses.value.map((s) => [s.context, s.state, s.creator])).toEqual([
      ['gitops-console/staging', 'success', 'gitops-console'],
    ]);

    // the same branch again: the forge refuses, the adapter says so
    const again = await forge.openPullRequest(repo, {
      baseBranch: 'main',
      branch: `console/log-level-${run}`,
      title: 'again',
      commitMessage: 'again',
      files: [{ path, content: next }],
    });
    expect(again.ok).toBe(false);
    if (!again.ok) expect(again.state).toBe('refused');
  });

  it('says "no forge configured" for a host without a token, and without a tokens file', async () => {
    const { dir } = consoleForge();
    // another host (the sandbox's own repo is on the forge's host)
    const plain = dir.forRepoUrl('http://127.0.0.1:9/platform/digital-human.git');
    expect(plain.ok).toBe(false);
    if (!plain.ok) {
      expect(plain.state).toBe('no-forge-configured');
      expect(plain.message).toMatch(/^no forge configured/);
    }
    const none = loadForgeDirectory(undefined).forRepoUrl(sandboxForge().repo.cloneUrl);
    expect(none.ok === false && none.state).toBe('no-forge-configured');
  });

  it('forge down → "forge unreachable", and back', async () => {
    const { forge, repo } = consoleForge();
    const sha = await forgeBranchHead('main');
    await makeForgeUnreachable();
    try {
      const t0 = Date.now();
      const r = await forge.mergedPullRequest(repo, sha);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.state).toBe('forge-unreachable');
        expect(r.message).toMatch(/^forge unreachable/);
      }
      expect(Date.now() - t0).toBeLessThan(5000);
      expectNoToken(r);
      const st = await forge.commitStatuses(repo, sha);
      expect(st.ok === false && st.state).toBe('forge-unreachable');
    } finally {
      await makeForgeReachable();
    }
    const back = await consoleForge().forge.mergedPullRequest(repo, sha);
    expect(back.ok).toBe(true);
  });
});
