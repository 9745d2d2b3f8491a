// The sandbox forge's users and how the sandbox speaks to it (re-exported by forge.ts): the org and users, the
// state of a running forge and its credentials file, Gitea's REST API, and git as a forge user (the token in the
// environment only).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ProcRecord } from './procs.ts';

export const FORGE_ORG = 'platform';
export const FORGE_USERS = {
  admin: 'forge-admin',
  developer: 'developer',
  reviewer: 'reviewer',
  /** the console's own identity on the forge (opens write-back PRs, posts commit statuses) */
  console: 'gitops-console',
  /** Flux's image-automation-controller (its GitRepository's Secret): pushes dev's image tag to main */
  imageAutomation: 'flux-image-automation',
} as const;
export type ForgeRole = keyof typeof FORGE_USERS;

export interface ForgeState {
  kind: 'gitea';
  version: string;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  dir: string;
  proc: ProcRecord;
  repo: { owner: string; name: string; cloneUrl: string };
  /** users, passwords and tokens (mode 0600); read with forgeCredentials() */
  credentialsFile: string;
  /** the console's forge token file (host → kind + token), mode 0600 */
  consoleTokensFile: string;
}

export interface Credentials {
  url: string;
  users: Record<ForgeRole, { username: string; password: string; token: string }>;
}

export function forgeCredentials(st: Pick<ForgeState, 'credentialsFile'>): Credentials {
  return JSON.parse(readFileSync(st.credentialsFile, 'utf8')) as Credentials;
}

export async function api(
  base: string,
  method: string,
  path: string,
  auth: { token?: string; basic?: [string, string] },
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (auth.token) headers.authorization = `token ${auth.token}`;
  if (auth.basic) headers.authorization = `Basic ${Buffer.from(auth.basic.join(':')).toString('base64')}`;
  const r = await fetch(`${base}/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await r.text();
  let json: unknown = text;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: r.status, json };
}

export async function must(
  what: string,
  p: Promise<{ status: number; json: unknown }>,
  ok: number[] = [200, 201, 204],
): Promise<unknown> {
  const r = await p;
  if (!ok.includes(r.status)) {
    // the body is Gitea's error message; it never contains the credentials we sent
    throw new Error(`forge set-up: ${what}: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  }
  return r.json;
}

/**
 * git's environment for a forge user: the credentials travel in an environment-only git config entry
 * (http.extraHeader), never in argv, URLs, files under git, or logs.
 */
export function forgeAuthEnv(user: { username: string; token: string }): Record<string, string> {
  return {
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`${user.username}:${user.token}`).toString('base64')}`,
  };
}

function gitEnv(username: string, token: string): Record<string, string> {
  return {
    ...forgeAuthEnv({ username, token }),
    GIT_AUTHOR_NAME: 'Sandbox Seeder',
    GIT_AUTHOR_EMAIL: 'seeder@sandbox.invalid',
    GIT_COMMITTER_NAME: 'Sandbox Seeder',
    GIT_COMMITTER_EMAIL: 'seeder@sandbox.invalid',
  };
}

/** Runs git with a forge user's token (environment only). Errors carry git's stderr, which has no token. */
export function forgeGit(args: string[], cwd: string, user: { username: string; token: string }): string {
  try {
    return execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, ...gitEnv(user.username, user.token) },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    const sub = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c' && args[i - 1] !== '--git-dir');
    throw new Error(`git ${sub ?? ''}: ${err.stderr?.trim() || err.message}`);
  }
}
