// The one way the BFF runs git: execFile (never a shell) with a timeout, no prompt, no system config, no
// hooks, no signing, one protocol policy, and the one URL policy (./url-policy.ts) for every run that talks to
// a remote. Every message it produces has the user info of URLs removed.
import { execFile } from 'node:child_process';
import { redactUrlCredentials } from '../../domain/url-credentials.ts';
import { addressKind, parseIp, parseIPv4Forms } from './ip-address.ts';
import { checkUrl, currentUrlPolicy, gitRemoteConfig, UnfetchableUrlError, type UrlPolicy } from './url-policy.ts';

export { UnfetchableUrlError } from './url-policy.ts';

/**
 * The transports git may use, for every repository the console touches (mirrors, renders, write-backs):
 * http(s), and ssh when CONSOLE_GIT_ALLOW_SSH=1. `file:` (which would let a repository URL written into a
 * cluster object read this host's files), the unauthenticated `git:` and every other transport are refused.
 * Tests that need a local bare repository set CONSOLE_GIT_ALLOW_FILE_URLS=1 (never in production; docs/operate/configuration.md
 * says so).
 */
export const GIT_PROTOCOLS = 'http:https';

export const gitProtocols = (policy: UrlPolicy = currentUrlPolicy()): string =>
  [GIT_PROTOCOLS, ...(policy.allowSsh ? ['ssh'] : []), ...(policy.allowFile ? ['file'] : [])].join(':');

/** A failed git run: its stderr (URL credentials removed) and whether it was killed by the timeout. */
export class GitRunError extends Error {
  constructor(
    readonly stderr: string,
    readonly timedOut: boolean,
    readonly timeoutMs: number,
  ) {
    super(timedOut ? `timed out after ${timeoutMs} ms` : stderr.trim().split('\n').slice(-3).join(' ').slice(0, 500));
    this.name = 'GitRunError';
  }
}

export interface GitRunOptions {
  cwd?: string;
  /** default 30 s */
  timeoutMs?: number;
  /** stdout limit, default 16 MiB */
  maxBytes?: number;
  /** commits made by this run carry this author and committer */
  author?: { name: string; email: string };
  /** the git binary (tests: a fake); default `git` from PATH */
  bin?: string;
  /**
   * The repository URL this run talks to (clone, fetch, ls-remote, push — required for them): checked by the URL
   * policy first, replaced in `args` by its checked form, its addresses pinned, no redirect followed.
   */
  remote?: string;
  /** the URL policy (tests); default the console's */
  policy?: UrlPolicy;
}

/** Subcommands that talk to a remote: they run only with a checked `remote`. */
const NETWORK_COMMANDS = new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote', 'fetch-pack', 'send-pack']);
const OPTIONS_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path']);

/** The git subcommand of an argument list (after `-C dir`, `-c k=v` and other global options). */
export function gitSubcommand(args: string[]): string | undefined {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) i += OPTIONS_WITH_VALUE.has(args[i]!) ? 2 : 1;
  return args[i];
}

export async function runGit(args: string[], opts: GitRunOptions = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const policy = opts.policy ?? currentUrlPolicy();
  const sub = gitSubcommand(args);
  const talks =
    sub !== undefined &&
    (NETWORK_COMMANDS.has(sub) || (sub === 'archive' && args.some((a) => a.startsWith('--remote'))));
  if (talks && opts.remote === undefined)
    throw new UnfetchableUrlError(`refusing git ${sub} without a checked remote URL`);
  const checked = opts.remote !== undefined ? await checkUrl(opts.remote, 'git', policy) : undefined;
  const finalArgs = checked ? args.map((a) => (a === opts.remote ? checked.href : a)) : args;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    SSH_ASKPASS: '',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ALLOW_PROTOCOL: gitProtocols(policy),
    // a path from Git or a person is a path, never a glob or pathspec magic (`*`, `:(exclude)`): issue 40
    GIT_LITERAL_PATHSPECS: '1',
    LC_ALL: 'C',
  };
  if (opts.author) {
    env.GIT_AUTHOR_NAME = opts.author.name;
    env.GIT_AUTHOR_EMAIL = opts.author.email;
    env.GIT_COMMITTER_NAME = opts.author.name;
    env.GIT_COMMITTER_EMAIL = opts.author.email;
  }
  return new Promise((resolve, reject) => {
    execFile(
      opts.bin ?? 'git',
      ['-c', 'commit.gpgsign=false', '-c', 'core.hooksPath=/dev/null', ...gitRemoteConfig(checked), ...finalArgs],
      { cwd: opts.cwd, env, timeout: timeoutMs, maxBuffer: opts.maxBytes ?? 16 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const killed = Boolean((err as { killed?: boolean }).killed);
        reject(new GitRunError(redactUrlCredentials(stderr || err.message), killed, timeoutMs));
      },
    );
  });
}

/**
 * The literal floor for URLs the BFF fetches that are not Git or forge URLs (the release verifications' http
 * checks, which an operator configures): http(s) only, and never a link-local or cloud metadata address, in any
 * form (decimal/octal/hex IPv4, IPv4-mapped IPv6). Git and forge URLs go through the full policy (url-policy.ts).
 */
export function assertFetchableUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnfetchableUrlError('refusing a string that is not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UnfetchableUrlError(`refusing ${u.protocol} URL`);
  const h = u.hostname.replace(/^\[|\]$/g, '');
  const v4 = parseIPv4Forms(h);
  const ip = parseIp(h) ?? (v4 === 'invalid' ? undefined : v4);
  const kind = ip ? addressKind(ip) : undefined;
  if (kind === 'link-local' || kind === 'metadata' || /^metadata\.google\.internal\.?$/i.test(h))
    throw new UnfetchableUrlError(`refusing link-local / metadata address ${h}`);
  return u;
}
