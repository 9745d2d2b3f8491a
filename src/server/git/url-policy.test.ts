// The one Git URL policy, table by table: the forms a hostile URL takes to reach a metadata service, this host
// or a private network, with a fake resolver standing in for DNS (names like 169.254.169.254.nip.io).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import { addressKind, formatIp, parseIp, parseIPv4Forms, unmap } from './ip-address.ts';
import {
  assertTokenTransport,
  checkUrl,
  checkUrlSync,
  gitRemoteConfig,
  makeUrlPolicy,
  parseAllowHosts,
  UnfetchableUrlError,
  type Resolver,
} from './url-policy.ts';

const DNS: Record<string, string[]> = {
  'git.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  '169.254.169.254.nip.io': ['169.254.169.254'],
  'a9fe-a9fe.sslip.io': ['::ffff:169.254.169.254'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
  'git.corp': ['10.0.0.7'],
  localhost: ['127.0.0.1', '::1'],
};
const calls: string[] = [];
const resolve: Resolver = async (host) => {
  calls.push(host);
  const a = DNS[host.replace(/\.$/, '')];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a;
};
const policy = (s: Parameters<typeof makeUrlPolicy>[0] = {}) => makeUrlPolicy({ resolve, ...s });
const refusal = async (p: Promise<unknown>) =>
  p.then(
    () => 'allowed',
    (e: unknown) => (e instanceof UnfetchableUrlError ? e.message : `unexpected ${String(e)}`),
  );

describe('the Git URL policy refuses', () => {
  it.each([
    // cloud metadata, in every spelling
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254: a cloud metadata address/],
    ['http://[::ffff:169.254.169.254]/', /::ffff:a9fe:a9fe \(169\.254\.169\.254\): a cloud metadata address/],
    ['http://[::ffff:a9fe:a9fe]/', /cloud metadata/],
    ['http://[::169.254.169.254]/', /cloud metadata/], // IPv4-compatible
    ['http://[64:ff9b::a9fe:a9fe]/', /cloud metadata/], // NAT64
    ['http://[2002:a9fe:a9fe::1]/', /cloud metadata/], // 6to4
    ['http://2852039166/', /169\.254\.169\.254: a cloud metadata address/], // decimal
    ['http://0xa9.0xfe.0xa9.0xfe/', /169\.254\.169\.254: a cloud metadata address/], // hex
    ['http://0251.0376.0251.0376/', /169\.254\.169\.254: a cloud metadata address/], // octal
    ['http://0xa9fea9fe/', /cloud metadata/],
    ['http://169.254.43518/', /cloud metadata/], // two parts
    ['HTTP://169.254.169.254/', /cloud metadata/], // upper-case scheme
    ['http://good@169.254.169.254/', /cloud metadata/], // user info that looks like a host
    ['http://good.example.com:pw@169.254.169.254:80/', /cloud metadata/],
    [
      'http://169.254.169.254.nip.io/',
      /169\.254\.169\.254\.nip\.io: it resolves to 169\.254\.169\.254, a cloud metadata/,
    ],
    ['http://a9fe-a9fe.sslip.io/', /resolves to ::ffff:a9fe:a9fe \(169\.254\.169\.254\), a cloud metadata/],
    ['http://metadata.google.internal/computeMetadata/v1/', /a cloud metadata service/],
    ['http://METADATA.google.internal./', /a cloud metadata service/],
    ['http://100.100.100.200/', /cloud metadata/],
    ['http://[fd00:ec2::254]/', /cloud metadata/],
    ['http://169.254.170.2/v2/credentials', /cloud metadata/],
    // this host, private networks, link-local, unspecified
    ['http://127.0.0.1:3000/o/r.git', /127\.0\.0\.1: a loopback address \(not in CONSOLE_GIT_ALLOW_HOSTS\)/],
    ['http://127.1/', /loopback/],
    ['http://2130706433/', /loopback/],
    ['http://[::1]/', /loopback/],
    ['http://[::ffff:127.0.0.1]/', /loopback/],
    ['http://localhost:8080/', /localhost: it resolves to 127\.0\.0\.1, a loopback address/],
    ['http://0/', /unspecified/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://10.0.0.1/', /private/],
    ['http://172.16.5.4/', /private/],
    ['http://192.168.1.1/', /private/],
    ['http://100.64.0.1/', /private/], // carrier-grade NAT
    ['http://[fd12:3456::1]/', /private/], // unique local
    ['http://[fe80::1]/', /link-local/],
    ['http://169.254.10.10/', /link-local/],
    ['http://224.0.0.1/', /reserved or multicast/],
    ['http://internal.example.com/o/r.git', /resolves to 10\.1\.2\.3, a private address/],
    ['http://mixed.example.com/o/r.git', /resolves to 127\.0\.0\.1, a loopback/], // one bad address is enough
    // transports
    ['ssh://git@git.example.com/o/r.git', /ssh is off/],
    ['SSH://git@git.example.com/o/r.git', /ssh is off/],
    ['git@git.example.com:o/r.git', /scp-style\) URL: ssh is off/],
    ['git://git.example.com/o/r.git', /a git: URL/],
    ['file:///etc/passwd', /a file: URL/],
    ['FILE:///etc/passwd', /a file: URL/],
    ['/tmp/repo.git', /not a URL/],
    ['ext::sh -c touch% /tmp/pwned', /white space/],
    ['ext::sh', /remote-helper/],
    ['fd::17/o/r.git', /remote-helper/],
    ['gopher://git.example.com/', /a gopher: URL/],
    ['http://good.example.com\\@169.254.169.254/', /\\/], // parsers disagree on which host this names
    ['http://git.example.com/o/r.git\n', /control characters/],
    ['http://256.256.256.256/', /not a URL/],
    ['http://nowhere.invalid/', /cannot resolve nowhere\.invalid: ENOTFOUND/],
  ])('%s', async (url, why) => {
    expect(await refusal(checkUrl(url, 'git', policy()))).toMatch(why);
  });

  it.each([
    ['ssh://2852039166/o/r.git', /169\.254\.169\.254 \(written 2852039166\): a cloud metadata address/], // not normalised by URL
    ['ssh://0xa9.0xfe.0xa9.0xfe/o/r.git', /cloud metadata/],
    ['ssh://[::ffff:169.254.169.254]/o/r.git', /cloud metadata/],
    ['ssh://git@127.0.0.1/o/r.git', /loopback/],
    ['git@169.254.169.254:o/r.git', /cloud metadata/],
    ['git@[::1]:o/r.git', /loopback/],
    ['git@169.254.169.254.nip.io:o/r.git', /resolves to 169\.254\.169\.254/],
    ['ssh://-oProxyCommand=touch%20x/o/r.git', /the host/],
    ['ssh://-oProxyCommand=x@git.example.com/o/r.git', /the host/],
    ['-oProxyCommand=x:o/r.git', /the host/],
    ['ssh://1.2.3.4.5/o/r.git', /not a valid address/],
  ])('with ssh on, still %s', async (url, why) => {
    expect(await refusal(checkUrl(url, 'git', policy({ allowSsh: true })))).toMatch(why);
  });

  it('metadata addresses even when an allow-list entry covers them', async () => {
    const p = policy({ allowHosts: ['169.254.169.254', '0.0.0.0/0', '::/0', '169.254.169.254.nip.io'] });
    expect(await refusal(checkUrl('http://169.254.169.254/', 'git', p))).toMatch(/cloud metadata/);
    expect(await refusal(checkUrl('http://[::ffff:a9fe:a9fe]/', 'git', p))).toMatch(/cloud metadata/);
    expect(await refusal(checkUrl('http://169.254.169.254.nip.io/', 'git', p))).toMatch(/cloud metadata/);
  });

  it('forge (http) requests: ssh, scp-style and file: URLs whatever the switches', async () => {
    const p = policy({ allowSsh: true, allowFile: true });
    expect(await refusal(checkUrl('ssh://git.example.com/x', 'http', p))).toMatch(/a ssh: URL/);
    expect(await refusal(checkUrl('file:///etc/passwd', 'http', p))).toMatch(/a file: URL/);
    expect(await refusal(checkUrl('git@git.example.com:o/r.git', 'http', p))).toMatch(/not a URL|a git@/);
  });

  it('names no credentials of the URL it refuses', async () => {
    const msg = await refusal(checkUrl('ftp://oncall:s3cr3t@git.example.com/x', 'git', policy()));
    expect(msg).toMatch(/refusing/);
    expect(msg).not.toMatch(/s3cr3t/);
    expect(await refusal(checkUrl('not a url at all, token s3cr3t', 'git', policy()))).not.toMatch(/s3cr3t/);
  });
});

describe('the Git URL policy allows', () => {
  it('public http(s) hosts, handing on the URL as parsed', async () => {
    const c = await checkUrl('https://oncall:tok@Git.Example.com/o/r.git', 'git', policy());
    expect(c).toMatchObject({
      href: 'https://oncall:tok@git.example.com/o/r.git',
      host: 'git.example.com',
      port: 443,
      addresses: ['93.184.216.34'],
      allowListed: false,
    });
    expect((await checkUrl('http://[2606:2800:220:1:248:1893:25c8:1946]:8080/x', 'git', policy())).port).toBe(8080);
  });

  it('ssh (URL and scp-style) only when configured', async () => {
    const p = policy({ allowSsh: true });
    expect(await checkUrl('ssh://git@git.example.com:2222/o/r.git', 'git', p)).toMatchObject({ port: 2222 });
    expect(await checkUrl('git@git.example.com:o/r.git', 'git', p)).toMatchObject({
      href: 'git@git.example.com:o/r.git',
      host: 'git.example.com',
      addresses: ['93.184.216.34'],
    });
  });

  it('file: only with the tests switch, and for git only', async () => {
    expect(await checkUrl('file:///tmp/bare.git', 'git', policy({ allowFile: true }))).toMatchObject({
      href: 'file:///tmp/bare.git',
      addresses: [],
    });
  });

  it.each([
    // [entries, url]
    [['127.0.0.1'], 'http://127.0.0.1:3000/o/r.git'],
    [['127.0.0.1'], 'http://[::ffff:127.0.0.1]:3000/o/r.git'], // the same address, mapped
    [['127.0.0.1:3000'], 'http://127.0.0.1:3000/o/r.git'],
    [['[::1]:3000'], 'http://[::1]:3000/o/r.git'],
    [['::1'], 'http://[0:0:0:0:0:0:0:1]/o/r.git'],
    [['127.0.0.0/8'], 'http://127.0.0.2/'],
    [['git.corp'], 'http://git.corp:3000/o/r.git'],
    [['GIT.CORP.'], 'http://git.corp/o/r.git'],
    [['10.0.0.0/8'], 'http://git.corp/o/r.git'],
    [['10.0.0.0/8'], 'http://internal.example.com/'],
    [['::ffff:10.0.0.0/104'], 'http://git.corp/'], // a mapped range is its IPv4 range
    [['fd00::/8'], 'http://[fd12::1]/'],
    [['100.64.0.0/10'], 'http://100.64.0.1/'],
    [['git.example.com', ' 10.0.0.0/8 '], 'http://git.corp/'],
  ])('allow-list %j lets %s through', async (entries, url) => {
    expect((await checkUrl(url, 'git', policy({ allowHosts: entries }))).allowListed).toBe(true);
  });

  it.each([
    [['127.0.0.1:3000'], 'http://127.0.0.1:3001/o/r.git', /loopback/], // another port
    [['127.0.0.1'], 'http://localhost/', /resolves to 127\.0\.0\.1/], // a name is not its address
    [['127.0.0.1'], 'http://127.0.0.2/', /loopback/],
    [['127.0.0.1'], 'http://[::1]/', /loopback/],
    [['git.corp:443'], 'http://git.corp/', /private/], // http's port is 80
    [['10.0.0.0/16'], 'http://internal.example.com/', /private/], // 10.1.2.3 is outside
    [['git.example.com'], 'http://mixed.example.com/', /loopback/],
  ])('allow-list %j does not let %s through', async (entries, url, why) => {
    expect(await refusal(checkUrl(url, 'git', policy({ allowHosts: entries })))).toMatch(why);
  });

  it('the synchronous check decides literal addresses and leaves names to the lookup', () => {
    const before = calls.length;
    expect(() => checkUrlSync('http://2852039166/', 'http', policy())).toThrow(/cloud metadata/);
    expect(checkUrlSync('http://169.254.169.254.nip.io/', 'http', policy()).addresses).toEqual([]);
    expect(calls.length).toBe(before);
  });
});

describe('the allow-list setting', () => {
  it.each(['not a host!', '10.0.0.0/33', '10.0.0.0/x', 'git.corp:99999', 'git.corp:0', '1.2.3.4.5', 'http://git.corp'])(
    'refuses %j with its name',
    (entry) => {
      expect(() => parseAllowHosts([entry])).toThrow(/CONSOLE_GIT_ALLOW_HOSTS: .* is not a host, host:port or CIDR/);
    },
  );

  it('is validated at start-up, as is CONSOLE_GIT_ALLOW_SSH', () => {
    const env = { CONSOLE_SANDBOX: '1' };
    expect(() => loadConfig({ ...env, CONSOLE_GIT_ALLOW_HOSTS: '127.0.0.1,bad host' }, [])).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, CONSOLE_GIT_ALLOW_HOSTS: '127.0.0.1,bad host' }, [])).toThrow(
      /CONSOLE_GIT_ALLOW_HOSTS: "bad host"/,
    );
    expect(() => loadConfig({ ...env, CONSOLE_GIT_ALLOW_SSH: 'yes' }, [])).toThrow(
      /CONSOLE_GIT_ALLOW_SSH must be 1 or 0/,
    );
    expect(
      loadConfig({ ...env, CONSOLE_GIT_ALLOW_HOSTS: ' 127.0.0.1:3000 , 10.0.0.0/8', CONSOLE_GIT_ALLOW_SSH: '1' }, [])
        .git,
    ).toEqual({
      allowHosts: ['127.0.0.1:3000', '10.0.0.0/8'],
      allowSsh: true,
    });
    expect(loadConfig(env, []).git).toEqual({ allowHosts: [], allowSsh: false });
  });
});

describe('what git and the forge are given', () => {
  it('git: no redirects, and the checked addresses pinned for a name', async () => {
    const p = policy();
    expect(gitRemoteConfig(await checkUrl('https://git.example.com/o/r.git', 'git', p))).toEqual([
      '-c',
      'http.followRedirects=false',
      '-c',
      'http.curloptResolve=git.example.com:443:93.184.216.34',
    ]);
    expect(gitRemoteConfig(await checkUrl('http://v6.example.com:8080/o/r.git', 'git', p))).toContain(
      'http.curloptResolve=v6.example.com:8080:[2606:2800:220:1:248:1893:25c8:1946]',
    );
    expect(gitRemoteConfig(await checkUrl('http://93.184.216.34/o/r.git', 'git', p))).toEqual([
      '-c',
      'http.followRedirects=false',
    ]);
    expect(gitRemoteConfig(undefined)).toEqual(['-c', 'http.followRedirects=false']);
  });

  it('a forge token: over https, or over http only to an allow-listed loopback address', async () => {
    const p = policy({ allowHosts: ['127.0.0.1', '10.0.0.0/8'] });
    const token = async (url: string) => refusal(checkUrl(url, 'http', p).then(assertTokenTransport));
    expect(await token('https://git.example.com/api/v1')).toBe('allowed');
    expect(await token('https://git.corp/api/v1')).toBe('allowed');
    expect(await token('http://127.0.0.1:3000/api/v1')).toBe('allowed');
    expect(await token('http://git.example.com/api/v1')).toMatch(/forge token over http:\/\/git\.example\.com/);
    expect(await token('http://git.corp/api/v1')).toMatch(/tokens go over https only/); // private, not loopback
    expect(await token('http://localhost:3000/api/v1')).toMatch(/loopback/); // not allow-listed: refused before
  });
});

describe('IP address forms', () => {
  it.each([
    ['2852039166', '169.254.169.254'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
    ['169.254.43518', '169.254.169.254'],
    ['169.16689662', '169.254.169.254'],
    ['0x7f.1', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['1.2.3.4.', '1.2.3.4'],
  ])('%s is %s', (text, ip) => {
    const v = parseIPv4Forms(text);
    expect(v && v !== 'invalid' ? formatIp(v) : v).toBe(ip);
  });

  it.each(['256.1.1.1', '1.2.3.4.5', '08', 'example.123', '4294967296'])('%s is no address', (t) => {
    expect(parseIPv4Forms(t)).toBe('invalid');
  });

  it.each(['git.example.com', 'a.b', '0x.example', '0x1g'])('%s is a name', (t) =>
    expect(parseIPv4Forms(t)).toBeUndefined(),
  );

  it('IPv6 forms are read, printed and unmapped', () => {
    expect(formatIp(parseIp('::ffff:169.254.169.254')!)).toBe('::ffff:a9fe:a9fe');
    expect(formatIp(unmap(parseIp('[::ffff:a9fe:a9fe]')!))).toBe('169.254.169.254');
    expect(formatIp(parseIp('2001:db8:0:0:1:0:0:1')!)).toBe('2001:db8::1:0:0:1');
    expect(formatIp(parseIp('fe80::1%eth0')!)).toBe('fe80::1');
    expect(addressKind(parseIp('fe80::1%eth0')!)).toBe('link-local');
    expect(addressKind(parseIp('2606:4700::1111')!)).toBe('public');
    expect(addressKind(parseIp('8.8.8.8')!)).toBe('public');
    expect(parseIp('1.2.3')).toBeUndefined();
  });
});
