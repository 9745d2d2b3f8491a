// Repositories of the sandbox forge's org (forge.ts re-exports the public ones): the seed repo at first start, and
// a test's own, made and deleted on a running forge.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SEED_REPO } from './seed.ts';
import { FORGE_ORG, api, forgeCredentials, forgeGit, must, type Credentials, type ForgeState } from './forge-api.ts';

/**
 * A repository of the org like the seed repo: public, the four users as writers, `files` as its first commit on
 * main, main protected the same way (only the admin and the image automation bot push directly; everyone else
 * merges an approved PR).
 */
export async function createRepo(
  st: Pick<ForgeState, 'url' | 'dir'>,
  users: Credentials['users'],
  name: string,
  files: Record<string, string>,
  opts: { description: string; message: string },
): Promise<{ owner: string; name: string; cloneUrl: string }> {
  const adminTok = { token: users.admin.token };
  await must(
    `repo ${FORGE_ORG}/${name}`,
    api(st.url, 'POST', `/orgs/${FORGE_ORG}/repos`, adminTok, {
      name,
      default_branch: 'main',
      private: false,
      auto_init: false,
      description: opts.description,
    }),
  );
  lightUpdateHook(join(st.dir, 'repos', FORGE_ORG.toLowerCase(), `${name.toLowerCase()}.git`));
  for (const role of ['developer', 'reviewer', 'console', 'imageAutomation'] as const) {
    await must(
      `collaborator ${users[role].username}`,
      api(st.url, 'PUT', `/repos/${FORGE_ORG}/${name}/collaborators/${users[role].username}`, adminTok, {
        permission: 'write',
      }),
    );
  }
  const cloneUrl = `${st.url}/${FORGE_ORG}/${name}.git`;
  const tmp = mkdtempSync(join(tmpdir(), `forge-${name}-`));
  try {
    const admin = { username: users.admin.username, token: users.admin.token };
    forgeGit(['init', '-q', '--initial-branch=main', tmp], tmpdir(), admin);
    for (const [f, content] of Object.entries(files)) {
      mkdirSync(dirname(join(tmp, f)), { recursive: true });
      writeFileSync(join(tmp, f), content);
    }
    forgeGit(['add', '-A'], tmp, admin);
    forgeGit(['commit', '-q', '-m', opts.message], tmp, admin);
    forgeGit(['push', '-q', cloneUrl, 'main'], tmp, admin);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  await must(
    'protect main',
    api(st.url, 'POST', `/repos/${FORGE_ORG}/${name}/branch_protections`, adminTok, {
      rule_name: 'main',
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: [users.admin.username, users.imageAutomation.username],
      required_approvals: 1,
      block_on_rejected_reviews: true,
      dismiss_stale_approvals: true,
      block_admin_merge_override: true,
    }),
  );
  return { owner: FORGE_ORG, name, cloneUrl };
}

/** A repository of a test's own on a running forge, made like the seed repo (createRepo). */
export function createForgeRepo(
  st: ForgeState,
  name: string,
  files: Record<string, string>,
  message = `Seed ${name}`,
): Promise<{ owner: string; name: string; cloneUrl: string }> {
  return createRepo(st, forgeCredentials(st).users, name, files, { description: `a test's own repository`, message });
}

/** Deletes a repository of the org (a test's own, at its end); one already gone is fine. */
export async function deleteForgeRepo(st: ForgeState, name: string): Promise<void> {
  if (name === SEED_REPO) throw new Error('the seed repository is not a test repository');
  const token = forgeCredentials(st).users.admin.token;
  await must(
    `delete repo ${FORGE_ORG}/${name}`,
    api(st.url, 'DELETE', `/repos/${FORGE_ORG}/${name}`, { token }),
    [204, 404],
  );
}

/**
 * Gitea's `update` hook, as a shell script. Gitea runs three hooks per push, each starting the 150 MB gitea binary
 * (0.25 core-seconds); its `update` hook only refuses a push to `refs/pull/*` ("Update is empty and is kept only
 * for backwards compatibility", gitea 1.26 cmd/hook.go runHookUpdate), which this does without the start. The
 * pre-receive (branch protection) and post-receive (the forge's own records, webhooks) hooks stay Gitea's.
 */
export function lightUpdateHook(repoDir: string): void {
  const hook = join(repoDir, 'hooks', 'update.d', 'gitea');
  if (!existsSync(hook)) return;
  writeFileSync(
    hook,
    '#!/bin/sh\n# the sandbox: gitea hook update, without starting gitea (sandbox/forge-repos.ts lightUpdateHook)\n' +
      '[ "$GITEA_INTERNAL_PUSH" = true ] && exit 0\ncase "$1" in refs/pull/*) exit 1 ;; esac\nexit 0\n',
    { mode: 0o755 },
  );
}
