// The freeze write-back's clone passes the one Git URL policy before git runs: an app whose source URL names
// this host's files, an unauthenticated transport, ssh (off by default) or a metadata address is refused with
// a one-line reason, and git is never started (a fake git binary records whether it ran).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configureUrlPolicy } from '../git/url-policy.ts';
import { writeBackToGit, type WriteBackRequest } from './writeback.ts';

const work = mkdtempSync(join(tmpdir(), 'writeback-url-'));
const marker = join(work, 'git-ran');
const fakeGit = join(work, 'fake-git.sh');
writeFileSync(fakeGit, `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 });

const request = (repoUrl: string): WriteBackRequest => ({
  repoUrl,
  baseBranch: 'main',
  appPath: 'overlays/prod',
  branch: 'freeze/f1',
  message: 'Write back freeze f1',
  author: { name: 'On Call', email: 'oncall@example.com' },
  changes: [
    {
      id: 'c1',
      ref: { group: 'apps', kind: 'Deployment', namespace: 'prod', name: 'api' },
      path: 'spec.replicas',
      liveValue: 5,
    },
  ],
});

afterEach(() => {
  rmSync(marker, { force: true });
  configureUrlPolicy(undefined);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the write-back clone under the URL policy', () => {
  it.each([
    ['file:///etc', /a file: URL/],
    ['/srv/git/app.git', /not a URL/],
    ['git://git.example.com/platform/app.git', /a git: URL/],
    ['ssh://git@git.example.com/platform/app.git', /ssh is off/],
    ['git@git.example.com:platform/app.git', /ssh is off/],
    ['http://169.254.169.254/latest/meta-data/', /a cloud metadata address/],
    ['http://[::ffff:169.254.169.254]/x.git', /a cloud metadata address/],
    ['http://2852039166/x.git', /a cloud metadata address/],
    ['http://oncall:s3cr3t@10.0.0.5/platform/app.git', /10\.0\.0\.5: a private address/],
    ['http://127.0.0.1:3000/platform/app.git', /a loopback address \(not in CONSOLE_GIT_ALLOW_HOSTS\)/],
  ])('refuses %s before git runs', async (url, why) => {
    configureUrlPolicy({ allowHosts: [], allowSsh: false });
    const err = await writeBackToGit(request(url), { git: fakeGit, workDir: work }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    expect(msg).toMatch(/^cloning .* \(main\) failed: refusing /);
    expect(msg).toMatch(why);
    expect(msg).not.toMatch(/s3cr3t/);
    expect(existsSync(marker)).toBe(false);
  });

  it('lets an allow-listed host through to git', async () => {
    configureUrlPolicy({ allowHosts: ['127.0.0.1:3000'], allowSsh: false });
    const err = await writeBackToGit(request('http://127.0.0.1:3000/platform/app.git'), {
      git: fakeGit,
      workDir: work,
    }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^cloning .* failed/);
    expect((err as Error).message).not.toMatch(/refusing/);
    expect(existsSync(marker)).toBe(true);
  });
});
