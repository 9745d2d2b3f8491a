// Forge requests under the URL policy: the token never goes over plain http to anything but an allow-listed
// loopback address, a forge at a private or metadata address is not asked, and a redirect is not followed (a
// real local server answering 302, with a second server that must never be reached).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUrlPolicy, type Resolver } from '../git/url-policy.ts';
import { forgeDirectory } from './forge-directory.ts';
import { giteaForge } from './gitea.ts';

const SHA = 'a'.repeat(40);
const repo = { host: 'git.example.com', owner: 'platform', name: 'app' };
const DNS: Record<string, string[]> = {
  'git.example.com': ['93.184.216.34'],
  'git.corp': ['10.0.0.7'],
  'forge.169.254.169.254.nip.io': ['169.254.169.254'],
};
const resolve: Resolver = async (h) => {
  const a = DNS[h];
  if (!a) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  return a;
};

/** A fetch that records what it was asked and answers an empty status list. */
function recordingFetch() {
  const asked: Array<{ url: string; authorization: string | undefined; redirect: RequestRedirect | undefined }> = [];
  const f = (async (input: string | URL | Request, init?: RequestInit) => {
    asked.push({
      url: String(input),
      authorization: (init?.headers as Record<string, string> | undefined)?.authorization,
      redirect: init?.redirect,
    });
    return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { f, asked };
}

describe('forge requests under the URL policy', () => {
  it.each([
    ['http://git.example.com/api/v1', 'url-refused', /forge token over http:\/\/git\.example\.com/],
    ['http://git.corp/api/v1', 'url-refused', /git\.corp: it resolves to 10\.0\.0\.7, a private address/],
    ['https://forge.169.254.169.254.nip.io/api/v1', 'url-refused', /a cloud metadata address/],
    ['http://169.254.169.254/api/v1', 'url-refused', /a cloud metadata address/],
    ['http://[::ffff:a9fe:a9fe]/api/v1', 'url-refused', /a cloud metadata address/],
    ['http://127.0.0.1:3000/api/v1', 'url-refused', /127\.0\.0\.1: a loopback address/],
    ['https://nowhere.example.com/api/v1', 'forge-unreachable', /cannot resolve nowhere\.example\.com/],
  ])('%s: %s, and the token is not sent', async (apiUrl, state, why) => {
    const { f, asked } = recordingFetch();
    const forge = giteaForge({ apiUrl, token: 'tok-123', fetch: f, policy: makeUrlPolicy({ resolve }) });
    const r = await forge.commitStatuses(repo, SHA);
    expect(r).toMatchObject({ ok: false, state });
    expect(r.ok ? '' : r.message).toMatch(why);
    expect(r.ok ? '' : r.message).not.toMatch(/tok-123/);
    expect(asked).toHaveLength(0);
  });

  it('sends the token over https, and over http to an allow-listed loopback address', async () => {
    const cases: Array<[string, string[]]> = [
      ['https://git.example.com/api/v1', []],
      ['https://git.corp/api/v1', ['10.0.0.0/8']],
      ['http://127.0.0.1:3000/api/v1', ['127.0.0.1:3000']],
    ];
    for (const [apiUrl, allowHosts] of cases) {
      const { f, asked } = recordingFetch();
      const forge = giteaForge({ apiUrl, token: 'tok-123', fetch: f, policy: makeUrlPolicy({ resolve, allowHosts }) });
      expect(await forge.commitStatuses(repo, SHA)).toEqual({ ok: true, value: [] });
      expect(asked).toEqual([
        {
          url: `${apiUrl}/repos/platform/app/commits/${SHA}/statuses?limit=100`,
          authorization: 'token tok-123',
          redirect: 'manual',
        },
      ]);
    }
  });

  it('a private forge over http is refused even when allow-listed: tokens go over https', async () => {
    const { f, asked } = recordingFetch();
    const policy = makeUrlPolicy({ resolve, allowHosts: ['git.corp'] });
    const r = await giteaForge({ apiUrl: 'http://git.corp/api/v1', token: 't', fetch: f, policy }).commitStatuses(
      repo,
      SHA,
    );
    expect(r).toMatchObject({ ok: false, state: 'url-refused' });
    expect(asked).toHaveLength(0);
  });

  it('the directory derives an http API URL from an http repo URL: refused for a public host', async () => {
    const { f, asked } = recordingFetch();
    const dir = forgeDirectory(
      { 'git.example.com': { kind: 'gitea', token: 'tok-123' } },
      { fetch: f, policy: makeUrlPolicy({ resolve }) },
    );
    const found = dir.forRepoUrl('http://git.example.com/platform/app.git');
    expect(found.ok).toBe(true);
    if (!found.ok) return;
    const r = await found.value.forge.commitStatuses(found.value.repo, SHA);
    expect(r).toMatchObject({ ok: false, state: 'url-refused' });
    expect(asked).toHaveLength(0);
    // the same host over https is asked, with the token
    const https = dir.forRepoUrl('https://git.example.com/platform/app.git');
    expect(https.ok && (await https.value.forge.commitStatuses(https.value.repo, SHA)).ok).toBe(true);
    expect(asked.map((a) => a.url)).toEqual([
      `https://git.example.com/api/v1/repos/platform/app/commits/${SHA}/statuses?limit=100`,
    ]);
  });
});

describe('a forge that redirects', () => {
  let forgeServer: Server;
  let elsewhere: Server;
  const elsewhereHits: IncomingMessage[] = [];
  let base = '';

  beforeAll(async () => {
    elsewhere = createServer((req, res) => {
      elsewhereHits.push(req);
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    const ePort = (elsewhere.address() as { port: number }).port;
    forgeServer = createServer((req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${ePort}${req.url ?? '/'}` }).end();
    });
    await new Promise<void>((r) => forgeServer.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(forgeServer.address() as { port: number }).port}/api/v1`;
  });
  afterAll(() => {
    forgeServer.close();
    elsewhere.close();
  });

  it('is not followed: the answer is a refusal naming the redirect, and the other server sees nothing', async () => {
    const forge = giteaForge({
      apiUrl: base,
      token: 'tok-123',
      policy: makeUrlPolicy({ allowHosts: ['127.0.0.1'] }),
    });
    const r = await forge.commitStatuses(repo, SHA);
    expect(r).toMatchObject({ ok: false, state: 'url-refused', status: 302 });
    expect(r.ok ? '' : r.message).toMatch(/HTTP 302 \(a redirect\), which is not followed/);
    const pr = await forge.openPullRequest(repo, {
      baseBranch: 'main',
      branch: 'freeze/x',
      title: 't',
      commitMessage: 'm',
      files: [{ path: 'a.yaml', content: 'a: 1\n' }],
    });
    expect(pr).toMatchObject({ ok: false, state: 'url-refused' });
    expect(elsewhereHits).toHaveLength(0);
  });
});

describe('a busy forge', () => {
  const policy = makeUrlPolicy({ allowHosts: ['127.0.0.1:3000'] });
  const apiUrl = 'http://127.0.0.1:3000/api/v1';
  /** answers the given statuses in turn (the last one from then on), counting the requests by method */
  function answering(...statuses: number[]) {
    const asked: string[] = [];
    const f = (async (_input: string | URL | Request, init?: RequestInit) => {
      asked.push(init?.method ?? 'GET');
      const status = statuses[Math.min(asked.length - 1, statuses.length - 1)] ?? 200;
      return new Response(status === 200 ? '[]' : '{"message":"busy"}', { status });
    }) as typeof fetch;
    return { f, asked };
  }

  it('a read that got a 503 or 429 is asked again, and its answer counts', async () => {
    const { f, asked } = answering(503, 429, 200);
    const forge = giteaForge({ apiUrl, token: 't', fetch: f, policy, retryDelaysMs: [1, 1] });
    expect(await forge.commitStatuses(repo, SHA)).toEqual({ ok: true, value: [] });
    expect(asked).toEqual(['GET', 'GET', 'GET']);
  });

  it('a read still failing after the retries is unreachable, with the last status', async () => {
    const { f, asked } = answering(500);
    const forge = giteaForge({ apiUrl, token: 't', fetch: f, policy, retryDelaysMs: [1, 1] });
    expect(await forge.commitStatuses(repo, SHA)).toMatchObject({ ok: false, state: 'forge-unreachable', status: 500 });
    expect(asked).toHaveLength(3);
  });

  it('a refusal (403) is not asked again, nor is a write', async () => {
    const refused = answering(403);
    const forge = giteaForge({ apiUrl, token: 't', fetch: refused.f, policy, retryDelaysMs: [1, 1] });
    expect(await forge.commitStatuses(repo, SHA)).toMatchObject({ ok: false, state: 'refused' });
    expect(refused.asked).toHaveLength(1);
    const busy = answering(503);
    const writer = giteaForge({ apiUrl, token: 't', fetch: busy.f, policy, retryDelaysMs: [1, 1] });
    const st = await writer.setCommitStatus(repo, SHA, { context: 'c', state: 'success', description: 'd' });
    expect(st).toMatchObject({ ok: false, state: 'forge-unreachable' });
    expect(busy.asked).toEqual(['POST']);
  });
});

describe('open pull requests', () => {
  it('lists the open ones into the base branch whose head starts with the prefix, newest first', async () => {
    const asked: string[] = [];
    const pr = (number: number, head: string, base = 'main') => ({
      number,
      html_url: `http://forge/p/app/pulls/${number}`,
      head: { ref: head, sha: `sha${number}` },
      base: { ref: base },
      body: `pr ${number}`,
    });
    const f = (async (input: string | URL | Request) => {
      asked.push(String(input));
      return new Response(
        JSON.stringify([
          pr(9, 'rollback/web-abc1234-2'),
          pr(8, 'rollback/web-abc1234-1', 'release'),
          pr(7, 'freeze/x'),
        ]),
        { status: 200 },
      );
    }) as typeof fetch;
    const forge = giteaForge({
      apiUrl: 'http://127.0.0.1:3000/api/v1',
      token: 't',
      fetch: f,
      policy: makeUrlPolicy({ allowHosts: ['127.0.0.1:3000'] }),
    });
    const r = await forge.openPullRequests?.(repo, 'main', 'rollback/web-abc1234-');
    expect(r).toEqual({
      ok: true,
      value: [
        {
          number: 9,
          url: 'http://forge/p/app/pulls/9',
          branch: 'rollback/web-abc1234-2',
          headCommit: 'sha9',
          body: 'pr 9',
        },
      ],
    });
    expect(asked).toEqual([
      `http://127.0.0.1:3000/api/v1/repos/${repo.owner}/${repo.name}/pulls?state=open&sort=newest&limit=50`,
    ]);
  });
});
