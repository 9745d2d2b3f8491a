// Which forge serves a repository URL, with which token: one token per repo host, read from a
// file (`CONSOLE_FORGE_TOKENS_FILE`), so no token is ever in the environment, argv, logs,
// evidence or responses. The file (mode 0600 recommended):
//
//   { "git.example.com": { "kind": "gitea", "token": "…", "apiUrl": "https://git.example.com/api/v1" } }
//
// `apiUrl` defaults to <scheme of the repo URL>://<host>/api/v1. Without a file, or for a host
// it does not name, every answer is "no forge configured". Every request passes the Git URL policy
// (git/url-policy.ts): the token goes over https only, or to an allow-listed loopback address.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { failure, type Forge, type ForgeResult, type RepoRef } from './forge.ts';
import { giteaForge } from './gitea.ts';
import type { UrlPolicy } from '../git/url-policy.ts';

const TokensFileSchema = z.record(
  z.string().min(1),
  z.object({
    kind: z.literal('gitea'),
    token: z.string().min(1),
    apiUrl: z.url({ protocol: /^https?$/ }).optional(),
  }),
);

export class ForgeConfigError extends Error {}

export interface ForgeDirectory {
  /** hosts with a configured forge (no tokens) */
  readonly hosts: string[];
  /** The forge and repository for a Git URL, or why there is none. */
  forRepoUrl(url: string): ForgeResult<{ forge: Forge; repo: RepoRef }>;
}

/** Parses http(s) Git URLs like `https://host/owner/name(.git)`; anything else is not a forge repo. */
export function parseRepoUrl(url: string): (RepoRef & { scheme: 'http' | 'https' }) | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const parts = u.pathname.replace(/\/+$/, '').split('/').filter(Boolean);
  if (parts.length !== 2) return undefined;
  const [owner = '', rawName = ''] = parts;
  const name = rawName.replace(/\.git$/, '');
  if (!owner || !name) return undefined;
  return { scheme: u.protocol === 'http:' ? 'http' : 'https', host: u.host, owner, name };
}

export function forgeDirectory(
  entries: Record<string, { kind: 'gitea'; token: string; apiUrl?: string | undefined }>,
  opts: { timeoutMs?: number; fetch?: typeof fetch; policy?: UrlPolicy } = {},
): ForgeDirectory {
  const forges = new Map<string, { apiUrl?: string | undefined; make: (apiUrl: string) => Forge }>();
  const cache = new Map<string, Forge>();
  for (const [host, e] of Object.entries(entries)) {
    const token = e.token;
    forges.set(host.toLowerCase(), {
      apiUrl: e.apiUrl,
      make: (apiUrl) =>
        giteaForge({
          apiUrl,
          token,
          ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
          ...(opts.fetch ? { fetch: opts.fetch } : {}),
          ...(opts.policy ? { policy: opts.policy } : {}),
        }),
    });
  }
  return {
    hosts: [...forges.keys()],
    forRepoUrl(url) {
      const repo = parseRepoUrl(url);
      if (!repo) return failure('no-forge-configured', 'not an http(s) repository URL of the form host/owner/name');
      const f = forges.get(repo.host.toLowerCase());
      if (!f) return failure('no-forge-configured', `no token for ${repo.host}`);
      const apiUrl = f.apiUrl ?? `${repo.scheme}://${repo.host}/api/v1`;
      let forge = cache.get(apiUrl);
      if (!forge) {
        forge = f.make(apiUrl);
        cache.set(apiUrl, forge);
      }
      return { ok: true, value: { forge, repo: { host: repo.host, owner: repo.owner, name: repo.name } } };
    },
  };
}

/** Reads the tokens file; no file configured → a directory that answers "no forge configured". */
export function loadForgeDirectory(
  file: string | undefined,
  opts: { timeoutMs?: number; fetch?: typeof fetch; policy?: UrlPolicy } = {},
): ForgeDirectory {
  if (!file) return forgeDirectory({}, opts);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    // the message names the file, never its content
    throw new ForgeConfigError(
      `cannot read forge tokens file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'invalid JSON'}`,
    );
  }
  const parsed = TokensFileSchema.safeParse(raw);
  if (!parsed.success) {
    const paths = parsed.error.issues.map((i) => i.path.join('.')).join(', ');
    throw new ForgeConfigError(`forge tokens file ${file} is invalid at: ${paths}`);
  }
  return forgeDirectory(parsed.data, opts);
}
