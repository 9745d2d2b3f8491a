// Sandbox mode allow-lists the sandbox's own Git endpoints by host and port, nothing else of loopback.
import { describe, expect, it } from 'vitest';
import { checkUrl, makeUrlPolicy } from './git/url-policy.ts';
import { sandboxGitHosts } from './sandbox-git-hosts.ts';

describe('sandboxGitHosts', () => {
  const hosts = sandboxGitHosts({
    git: { url: 'http://127.0.0.1:34069/platform/digital-human.git' },
    forge: { url: 'http://127.0.0.1:34069' },
    clusters: [{ ports: { apiserver: 6443, srcStorage: 9790 } }, { ports: { apiserver: 6444, srcStorage: 9791 } }],
  });

  it('names the forge and each artifact server once', () => {
    expect(hosts).toEqual(['127.0.0.1:34069', '127.0.0.1:9790', '127.0.0.1:9791']);
  });

  it('lets those through the policy and no other loopback port', async () => {
    const policy = makeUrlPolicy({ allowHosts: hosts });
    await expect(checkUrl('http://127.0.0.1:34069/platform/digital-human.git', 'git', policy)).resolves.toBeTruthy();
    await expect(
      checkUrl('http://127.0.0.1:9791/gitrepository/flux-system/x/a.tar.gz', 'http', policy),
    ).resolves.toBeTruthy();
    await expect(checkUrl('http://127.0.0.1:6443/', 'http', policy)).rejects.toThrow(/loopback/);
  });
});
