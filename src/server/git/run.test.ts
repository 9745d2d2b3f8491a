// The git runner under the URL policy, with the real git binary against tiny local HTTP servers: a redirect is
// not followed, git connects to the address that was checked, and a refused URL never reaches git at all.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitMirrors } from './mirror.ts';
import { GitRunError, gitProtocols, runGit, UnfetchableUrlError } from './run.ts';
import { configureUrlPolicy, makeUrlPolicy } from './url-policy.ts';

interface Listener {
  server: Server;
  port: number;
  hits: IncomingMessage[];
}

async function listen(answer: (req: IncomingMessage) => { status: number; headers?: Record<string, string> }) {
  const hits: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    hits.push(req);
    const a = answer(req);
    res.writeHead(a.status, a.headers).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : 0, hits } satisfies Listener;
}

let target: Listener;
let redirecting: Listener;
let plain: Listener;
const work = mkdtempSync(join(tmpdir(), 'git-run-test-'));
const loopbackAllowed = makeUrlPolicy({ allowHosts: ['127.0.0.1'] });

beforeAll(async () => {
  target = await listen(() => ({ status: 404 }));
  redirecting = await listen((req) => ({
    status: 302,
    headers: { location: `http://127.0.0.1:${target.port}${req.url ?? '/'}` },
  }));
  plain = await listen(() => ({ status: 404 }));
});
afterAll(() => {
  for (const l of [target, redirecting, plain]) l.server.close();
  rmSync(work, { recursive: true, force: true });
  configureUrlPolicy(undefined);
});

describe('runGit under the URL policy', () => {
  it('does not follow a redirect (git alone would)', async () => {
    const url = `http://127.0.0.1:${redirecting.port}/o/r.git`;
    const err = await runGit(['ls-remote', url], { remote: url, policy: loopbackAllowed, timeoutMs: 20_000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GitRunError);
    expect((err as GitRunError).stderr).toMatch(/302/);
    expect(redirecting.hits.length).toBeGreaterThan(0);
    expect(target.hits).toHaveLength(0);

    // the control: git as it comes follows the same redirect to the other server
    await new Promise<void>((resolve) =>
      execFile('git', ['ls-remote', url], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }, () => resolve()),
    );
    expect(target.hits.length).toBeGreaterThan(0);
  });

  it('connects to the address it checked (the name is not looked up again)', async () => {
    // `git.test` resolves nowhere but in this policy: git reaches the server only through the pinned address
    const policy = makeUrlPolicy({ allowHosts: ['127.0.0.1/32'], resolve: async () => ['127.0.0.1'] });
    const url = `http://git.test:${plain.port}/o/r.git`;
    await expect(runGit(['ls-remote', url], { remote: url, policy, timeoutMs: 20_000 })).rejects.toBeInstanceOf(
      GitRunError,
    );
    expect(plain.hits.map((h) => h.headers.host)).toContain(`git.test:${plain.port}`);
  });

  it('hands git the URL it checked, not the text it was given', async () => {
    // git reads `HTTP://` as a remote helper named HTTP; the policy read it as http: git must get the same
    const before = plain.hits.length;
    const raw = `HTTP://127.0.0.1:${plain.port}/o/r.git`;
    const err = await runGit(['ls-remote', raw], { remote: raw, policy: loopbackAllowed, timeoutMs: 20_000 }).catch(
      (e: unknown) => e,
    );
    expect((err as GitRunError).stderr).not.toMatch(/remote-HTTP/);
    expect(plain.hits.slice(before).map((h) => h.url)).toContain('/o/r.git/info/refs?service=git-upload-pack');
  });

  it.each([
    'http://169.254.169.254/o/r.git',
    'http://[::ffff:169.254.169.254]/o/r.git',
    'http://2852039166/o/r.git',
    'file:///etc',
    'git://127.0.0.1/o/r.git',
    'ssh://git@127.0.0.1/o/r.git',
  ])('refuses %s before git runs', async (url) => {
    const marker = join(work, 'ran');
    rmSync(marker, { force: true });
    const fake = join(work, 'fake-git.sh');
    writeFileSync(fake, `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 });
    const err = await runGit(['clone', '--', url, join(work, 'checkout')], { remote: url, bin: fake }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnfetchableUrlError);
    expect((err as Error).message).toMatch(/^refusing /);
    expect(existsSync(marker)).toBe(false);
  });

  it('takes every path literally: a glob or pathspec magic names no other file (issue 40)', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'git-literal-'));
    try {
      await runGit(['init', '-q', repo]);
      for (const f of ['ab', 'ac', 'secret.env']) writeFileSync(join(repo, f), f);
      // without literal pathspecs `git add -- 'a*'` stages ab and ac, and `:(exclude)x` stages everything else
      for (const path of ['a*', ':(exclude)secret.env'])
        await expect(runGit(['add', '--', path], { cwd: repo }), path).rejects.toThrow(/did not match any files/);
      const staged = await runGit(['diff', '--cached', '--name-only'], { cwd: repo });
      expect(staged).toBe('');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('refuses a command that talks to a remote without a checked URL', async () => {
    for (const args of [
      ['ls-remote', 'http://127.0.0.1:1/x.git'],
      ['-C', work, 'fetch', 'origin'],
      ['-c', 'x.y=z', 'push', 'origin', 'HEAD'],
      ['clone', '--', 'http://127.0.0.1:1/x.git', 'dir'],
      ['archive', '--remote=http://127.0.0.1:1/x.git', 'HEAD'],
    ])
      await expect(runGit(args)).rejects.toThrow(/without a checked remote URL/);
    await expect(runGit(['--version'])).resolves.toMatch(/git version/);
  });

  it('allows the transports of the policy only', () => {
    expect(gitProtocols(makeUrlPolicy())).toBe('http:https');
    expect(gitProtocols(makeUrlPolicy({ allowSsh: true }))).toBe('http:https:ssh');
    expect(gitProtocols(makeUrlPolicy({ allowFile: true }))).toBe('http:https:file');
  });
});

describe('mirrors under the URL policy', () => {
  it('refuse a loopback repository unless it is allow-listed', async () => {
    const mirrors = GitMirrors.for(join(work, 'mirrors'));
    const url = `http://127.0.0.1:${plain.port}/o/mirror.git`;
    const hits = () => plain.hits.filter((h) => h.url?.startsWith('/o/mirror.git')).length;
    configureUrlPolicy({ allowHosts: [], allowSsh: false });
    await expect(mirrors.with(url, 'fetch', async () => 'read')).rejects.toThrow(
      /not a Git URL the console fetches \(refusing 127\.0\.0\.1: a loopback address/,
    );
    expect(hits()).toBe(0);
    configureUrlPolicy({ allowHosts: [`127.0.0.1:${plain.port}`], allowSsh: false });
    await expect(mirrors.with(url, 'fetch', async () => 'read')).rejects.toThrow(/404|not found/i);
    expect(hits()).toBeGreaterThan(0);
    configureUrlPolicy(undefined);
  });
});
