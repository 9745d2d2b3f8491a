// The one Git URL policy: every git run that talks to a remote (git/run.ts: mirrors, renders, the freeze
// write-back's clone and push) and every forge request (forge/gitea.ts) is checked here first.
//  - schemes: http(s); ssh only when configured (CONSOLE_GIT_ALLOW_SSH=1); `file:` only with the tests' switch
//    CONSOLE_GIT_ALLOW_FILE_URLS=1; everything else (git:, ext::, gopher:, a bare path) is refused.
//  - the host, in every form a URL parser accepts (decimal/octal/hex IPv4, IPv4-mapped IPv6), and every address
//    its name resolves to, must be public, or allow-listed in CONSOLE_GIT_ALLOW_HOSTS (host[:port] or CIDR) —
//    loopback, private (RFC 1918, ULA, CGNAT), link-local, unspecified and reserved addresses otherwise refused;
//    cloud metadata addresses always.
//  - the URL handed to git is the one that was checked (as parsed, so git cannot read another host from it), git
//    connects to the addresses that were checked (http.curloptResolve), and no redirect is followed.
//  - a forge token travels only over https, or to an allow-listed loopback address (the sandbox).
import { lookup } from 'node:dns/promises';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import {
  ADDRESS_KIND_WORDS,
  addressKind,
  formatIp,
  inCidr,
  parseCidr,
  parseIp,
  parseIPv4Forms,
  unmap,
  type Cidr,
  type Ip,
} from './ip-address.ts';

/** A URL the console will not fetch. `unresolved`: its host has no address now (a network failure, not a rule). */
export class UnfetchableUrlError extends Error {
  override name = 'UnfetchableUrlError';
  constructor(
    message: string,
    readonly reason: 'refused' | 'unresolved' = 'refused',
  ) {
    super(message);
  }
}

/** Every address of a host name (the system resolver by default; tests give a fake). */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface UrlPolicySettings {
  /** CONSOLE_GIT_ALLOW_HOSTS entries: `host`, `host:port`, `[v6]:port`, or a CIDR */
  allowHosts: string[];
  /** CONSOLE_GIT_ALLOW_SSH */
  allowSsh: boolean;
}

interface HostEntry {
  host: string;
  port?: number;
}

export interface UrlPolicy {
  hosts: HostEntry[];
  cidrs: Cidr[];
  allowSsh: boolean;
  /** tests only (CONSOLE_GIT_ALLOW_FILE_URLS=1); read when the policy is made */
  allowFile: boolean;
  resolve: Resolver;
}

const ALLOW_SETTING = 'CONSOLE_GIT_ALLOW_HOSTS';
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'ssh:': 22 };
/** names of metadata services, refused before any lookup */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data']);

/** A host as the allow-list compares it: lower case, no brackets or trailing dot, addresses in one form. */
function hostKey(host: string): string {
  const h = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '');
  const ip = parseIp(h) ?? parseIPv4Forms(h);
  return ip && ip !== 'invalid' ? formatIp(unmap(ip)) : h;
}

/**
 * Parses an allow-list; an entry it cannot read throws, naming it and the setting (a start-up error, never a
 * silent skip). `hostsOnly`: a list of hosts (host, host:port), where an address range is refused.
 */
export function parseAllowHosts(
  entries: string[],
  setting = ALLOW_SETTING,
  opts: { hostsOnly?: boolean } = {},
): Pick<UrlPolicy, 'hosts' | 'cidrs'> {
  const hosts: HostEntry[] = [];
  const cidrs: Cidr[] = [];
  for (const raw of entries) {
    const e = raw.trim();
    if (!e) continue;
    const bad = () =>
      new Error(
        `${setting}: ${JSON.stringify(e)} is not a host${opts.hostsOnly ? ' or host:port' : ', host:port or CIDR'}`,
      );
    if (e.includes('/')) {
      if (opts.hostsOnly) throw bad();
      const c = parseCidr(e);
      if (!c) throw bad();
      cidrs.push(c);
      continue;
    }
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(e) ?? /^([^:]+)(?::(\d+))?$/.exec(e);
    const host = m ? m[1]! : e; // several colons and no brackets: a bare IPv6 address
    const port = m?.[2] !== undefined ? Number(m[2]) : undefined;
    if (port !== undefined && (port < 1 || port > 65535)) throw bad();
    const ip = parseIp(host);
    if (!ip && (!/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_.])?$/i.test(host) || parseIPv4Forms(host) === 'invalid')) throw bad();
    hosts.push({ host: hostKey(host), ...(port !== undefined ? { port } : {}) });
  }
  return { hosts, cidrs };
}

export function makeUrlPolicy(
  s: Partial<UrlPolicySettings> & { resolve?: Resolver; allowFile?: boolean } = {},
): UrlPolicy {
  return {
    ...parseAllowHosts(s.allowHosts ?? []),
    allowSsh: s.allowSsh ?? false,
    allowFile: s.allowFile ?? false,
    resolve: s.resolve ?? systemResolver,
  };
}

export function listSetting(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

let configured: UrlPolicySettings | undefined;

/** The console's settings (main.ts, from config.ts); until then the environment's are used (tests, tools). */
export function configureUrlPolicy(s: UrlPolicySettings | undefined): void {
  configured = s;
}

/** The policy in force now: the configured settings, else the environment's; the tests' file switch read live. */
export function currentUrlPolicy(env: NodeJS.ProcessEnv = process.env): UrlPolicy {
  const s = configured ?? {
    allowHosts: listSetting(env.CONSOLE_GIT_ALLOW_HOSTS),
    allowSsh: env.CONSOLE_GIT_ALLOW_SSH === '1' || env.CONSOLE_GIT_ALLOW_SSH === 'true',
  };
  return makeUrlPolicy({ ...s, allowFile: env.CONSOLE_GIT_ALLOW_FILE_URLS === '1' });
}

/** What a tool is handed after the checks. */
export interface CheckedUrl {
  /** the URL to give git or fetch: the parsed form of what was checked (file: and scp-style: as given) */
  href: string;
  scheme: string;
  /** the host as parsed (brackets removed), '' for file: */
  host: string;
  port: number;
  /** the addresses that were checked ([] for file:) */
  addresses: string[];
  /** the host or every address is on the allow-list */
  allowListed: boolean;
}

const refuse = (m: string) => new UnfetchableUrlError(`refusing ${m}`);

/** `user@host:path`, git's scp-like ssh syntax: a colon before any slash, and no scheme. */
const SCP_LIKE = /^(?:([^@/:]+)@)?(\[[^\]@]+\]|[^:/@[\]]+):(.*)$/;

interface Parsed {
  url: URL | undefined;
  href: string;
  scheme: string;
  host: string;
  port: number;
}

function parse(raw: string, use: 'git' | 'http', policy: UrlPolicy): Parsed {
  // git (curl, ssh) and WHATWG URL would read a host differently out of these
  if (/[\s\\]/.test(raw) || [...raw].some((ch) => ch.charCodeAt(0) < 0x20 || ch === '\u007f'))
    throw refuse('a URL with white space, control characters or \\');
  if (use === 'git' && /^[a-z][a-z0-9+.-]*::/i.test(raw)) throw refuse('a git remote-helper URL (<transport>::)');
  if (use === 'git' && !raw.includes('://') && !/^file:/i.test(raw)) {
    const scp = SCP_LIKE.exec(raw);
    if (scp) {
      if (!policy.allowSsh) throw refuse('an ssh (scp-style) URL: ssh is off (CONSOLE_GIT_ALLOW_SSH)');
      const host = scp[2]!.replace(/^\[(.*)\]$/, '$1');
      if (host.startsWith('-') || scp[1]?.startsWith('-')) throw refuse(`the host ${JSON.stringify(host)}`);
      return { url: undefined, href: raw, scheme: 'ssh:', host, port: 22 };
    }
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(`${JSON.stringify(withoutUserInfo(raw)?.slice(0, 100))}: not a URL`);
  }
  const p = url.protocol;
  if (p === 'file:' && use === 'git' && policy.allowFile) return { url, href: raw, scheme: p, host: '', port: 0 };
  const ok = p === 'http:' || p === 'https:' || (p === 'ssh:' && use === 'git' && policy.allowSsh);
  if (!ok) {
    if (p === 'ssh:' && use === 'git') throw refuse('an ssh: URL: ssh is off (CONSOLE_GIT_ALLOW_SSH)');
    throw refuse(
      `a ${p} URL (the console fetches ${use === 'git' && policy.allowSsh ? 'http(s) and ssh' : 'http(s)'})`,
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw refuse('a URL without a host');
  if (host.startsWith('-') || host.includes('%') || /^(-|%2d)/i.test(url.username))
    throw refuse(`the host ${JSON.stringify(host)}`);
  return { url, href: url.href, scheme: p, host, port: url.port ? Number(url.port) : DEFAULT_PORTS[p]! };
}

/** The host (in any form, brackets and a trailing dot allowed) is on the policy's host list, for this port. */
export function hostAllowed(policy: Pick<UrlPolicy, 'hosts'>, host: string, port: number): boolean {
  const key = hostKey(host);
  return policy.hosts.some((e) => e.host === key && (e.port === undefined || e.port === port));
}

/** Throws unless `ip` may be contacted for `host`. */
function judge(policy: UrlPolicy, ip: Ip, shownHost: string, allowedHost: boolean, via: string): void {
  const kind = addressKind(ip);
  if (kind === 'public') return;
  const a = formatIp(ip);
  const inner = unmap(ip);
  const shown = inner.v !== ip.v ? `${a} (${formatIp(inner)})` : a;
  // `name: it resolves to 10.0.0.1, a private address`; an address: `169.254.169.254: a cloud metadata address`
  const subject = via || shownHost.toLowerCase() === a ? shownHost : `${a} (written ${shownHost})`;
  const label = inner.v !== ip.v && !via ? shown : subject;
  const what = via ? `${via}${shown}, ${ADDRESS_KIND_WORDS[kind]}` : ADDRESS_KIND_WORDS[kind];
  if (kind === 'metadata') throw refuse(`${label}: ${what}`);
  if (allowedHost || policy.cidrs.some((c) => inCidr(ip, c))) return;
  throw refuse(`${label}: ${what} (not in ${ALLOW_SETTING})`);
}

/** The host as an address when it is one, in any form a URL parser or inet_aton accepts. */
function literal(host: string): Ip | undefined {
  const ip = parseIp(host);
  if (ip) return ip;
  const v4 = parseIPv4Forms(host);
  if (v4 === 'invalid') throw refuse(`the host ${JSON.stringify(host)}: not a valid address`);
  return v4;
}

/**
 * The checks that need no lookup: the scheme, and the host when it is an address or a metadata name. Renders use
 * it to fail fast; `checkUrl` (which also resolves) is what guards a fetch.
 */
export function checkUrlSync(raw: string, use: 'git' | 'http', policy: UrlPolicy = currentUrlPolicy()): CheckedUrl {
  const p = parse(raw, use, policy);
  if (p.scheme === 'file:')
    return { href: p.href, scheme: p.scheme, host: '', port: 0, addresses: [], allowListed: false };
  const allowedHost = hostAllowed(policy, p.host, p.port);
  const name = p.host.toLowerCase().replace(/\.+$/, '');
  if (METADATA_NAMES.has(name)) throw refuse(`${p.host}: a cloud metadata service`);
  const ip = literal(p.host);
  if (ip) judge(policy, ip, p.host, allowedHost, '');
  return {
    href: p.href,
    scheme: p.scheme,
    host: p.host,
    port: p.port,
    addresses: ip ? [formatIp(ip)] : [],
    allowListed: allowedHost || (!!ip && policy.cidrs.some((c) => inCidr(ip, c))),
  };
}

/** Every check, the host resolved (all its addresses, each judged): what a git run or forge request awaits. */
export async function checkUrl(
  raw: string,
  use: 'git' | 'http',
  policy: UrlPolicy = currentUrlPolicy(),
): Promise<CheckedUrl> {
  const c = checkUrlSync(raw, use, policy);
  if (c.scheme === 'file:' || c.addresses.length) return c;
  let found: string[];
  try {
    found = await policy.resolve(c.host);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e));
    throw new UnfetchableUrlError(`cannot resolve ${c.host}: ${code}`, 'unresolved');
  }
  if (!found.length) throw new UnfetchableUrlError(`cannot resolve ${c.host}: no address`, 'unresolved');
  const allowedHost = hostAllowed(policy, c.host, c.port);
  const ips: Ip[] = [];
  for (const a of found) {
    const ip = parseIp(a);
    if (!ip) throw refuse(`${c.host}: it resolves to ${JSON.stringify(a)}, not an address`);
    judge(policy, ip, c.host, allowedHost, 'it resolves to ');
    ips.push(ip);
  }
  return {
    ...c,
    addresses: ips.map(formatIp),
    allowListed: allowedHost || ips.every((ip) => policy.cidrs.some((x) => inCidr(ip, x))),
  };
}

/**
 * git's `-c` options for a checked remote: no redirect followed, and (for an http(s) name) curl connects to the
 * addresses that were checked, so a name that resolves elsewhere a moment later (DNS rebinding) is not followed.
 */
export function gitRemoteConfig(c: CheckedUrl | undefined): string[] {
  const out = ['-c', 'http.followRedirects=false'];
  if (!c || (c.scheme !== 'http:' && c.scheme !== 'https:') || !c.addresses.length || parseIp(c.host)) return out;
  const addrs = c.addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
  return [...out, '-c', `http.curloptResolve=${c.host}:${c.port}:${addrs}`];
}

/** A forge token goes over https only, or to an allow-listed loopback address (the sandbox's forge). */
export function assertTokenTransport(c: CheckedUrl): void {
  if (c.scheme === 'https:') return;
  const loopback = c.addresses.length > 0 && c.addresses.every((a) => addressKind(parseIp(a)!) === 'loopback');
  if (c.scheme === 'http:' && loopback && c.allowListed) return;
  throw refuse(
    `to send a forge token over ${c.scheme.replace(/:$/, '')}://${c.host}: tokens go over https only (or to a loopback address in ${ALLOW_SETTING})`,
  );
}
