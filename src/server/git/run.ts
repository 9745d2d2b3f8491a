// The one way the BFF runs git: execFile (never a shell) with a timeout, no prompt, no system config, no
// hooks, no signing, and one protocol policy. Every message it produces has the user info of URLs removed.
import { execFile } from 'node:child_process';
import { redactUrlCredentials } from '../../domain/url-credentials.ts';

/**
 * The transports git may use, for every repository the console touches (mirrors, renders, write-backs):
 * http(s) and ssh. `file:` (which would let a repository URL written into a cluster object read this host's
 * files) and the unauthenticated `git:` are refused. Tests that need a local bare repository set
 * CONSOLE_GIT_ALLOW_FILE_URLS=1 (never in production; the README's settings table says so).
 */
export const GIT_PROTOCOLS = 'http:https:ssh';

export const gitProtocols = (): string =>
  process.env.CONSOLE_GIT_ALLOW_FILE_URLS === '1' ? `${GIT_PROTOCOLS}:file` : GIT_PROTOCOLS;

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
}

export function runGit(args: string[], opts: GitRunOptions = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    SSH_ASKPASS: '',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ALLOW_PROTOCOL: gitProtocols(),
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
      ['-c', 'commit.gpgsign=false', '-c', 'core.hooksPath=/dev/null', ...args],
      { cwd: opts.cwd, env, timeout: timeoutMs, maxBuffer: opts.maxBytes ?? 16 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const killed = Boolean((err as { killed?: boolean }).killed);
        reject(new GitRunError(redactUrlCredentials(stderr || err.message), killed, timeoutMs));
      },
    );
  });
}

/** Refused URLs: not http(s), or a link-local / cloud metadata address. */
export class UnfetchableUrlError extends Error {
  override name = 'UnfetchableUrlError';
}

/** Rejects URLs the BFF must never fetch: non-http(s), and link-local / cloud metadata addresses. */
export function assertFetchableUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnfetchableUrlError(`not a URL: ${raw}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UnfetchableUrlError(`refusing ${u.protocol} URL`);
  const h = u.hostname.replace(/^\[|\]$/g, '');
  if (/^169\.254\./.test(h) || /^fe80:/i.test(h) || h === 'metadata.google.internal' || h === '100.100.100.200') {
    throw new UnfetchableUrlError(`refusing link-local / metadata address ${h}`);
  }
  return u;
}
