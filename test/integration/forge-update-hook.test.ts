// The sandbox forge's `update` hook is a shell script (sandbox/forge-repos.ts lightUpdateHook) instead of Gitea's
// binary: it must refuse what Gitea's refused, a push to `refs/pull/*`, and let an ordinary branch through. On the
// file's own repository.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForgeRepo, deleteForgeRepo, forgeCredentials, forgeGit } from '../../sandbox/forge.ts';
import { sandboxForge } from '../../sandbox/scenario-forge.ts';

const forge = sandboxForge();
const name = `t-update-hook-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'update-hook-'));
let cloneUrl = '';

beforeAll(async () => {
  ({ cloneUrl } = await createForgeRepo(forge, name, { 'README.md': 'hook\n' }));
});
afterAll(async () => {
  await deleteForgeRepo(forge, name);
  rmSync(work, { recursive: true, force: true });
});

describe("the forge's update hook", () => {
  it('refuses a push to refs/pull/*, as Gitea does, and takes a branch', () => {
    const admin = forgeCredentials(forge).users.admin;
    const user = { username: admin.username, token: admin.token };
    forgeGit(['clone', '-q', cloneUrl, 'r'], work, user);
    const dir = join(work, 'r');
    writeFileSync(join(dir, 'x.txt'), 'x\n');
    forgeGit(['add', '-A'], dir, user);
    forgeGit(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'x'], dir, user);
    expect(() => forgeGit(['push', '-q', 'origin', 'HEAD:refs/pull/1/head'], dir, user)).toThrow(/refs\/pull\/1\/head/);
    forgeGit(['push', '-q', 'origin', 'HEAD:refs/heads/feature'], dir, user);
    expect(forgeGit(['ls-remote', 'origin', 'refs/heads/feature'], dir, user)).toMatch(/refs\/heads\/feature/);
  });
});
