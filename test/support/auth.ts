// Test identities: an accounts file with one user per role (a random password per run,
// never committed), and signing in over HTTP the way the SPA does.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseGrant } from '../../src/domain/access.ts';
import { hashPassword, type ScryptCost } from '../../src/server/auth/passwords.ts';

/**
 * The test consoles' password cost (CONSOLE_PASSWORD_SCRYPT_LOG2N=14, the setting's minimum): at the production
 * cost (2^17, ~0.8 s of one core per hash) the suite's ~300 console starts and sign-ins would add minutes of CPU.
 * One unit test (src/server/auth/auth.test.ts) hashes at the production cost.
 */
export const TEST_PASSWORD_ENV = { CONSOLE_PASSWORD_SCRYPT_LOG2N: '14' } as const;
export const TEST_PASSWORD_COST: ScryptCost = { N: 2 ** 14, r: 8, p: 1 };

// one per test run, shared with child processes (Playwright workers) through the environment
export const TEST_PASSWORD = (process.env.CONSOLE_TEST_PASSWORD ??= randomBytes(12).toString('base64url'));

/** name → grants ("role[@cluster[/env]]") */
export const TEST_USERS: Record<string, string[]> = {
  admin: ['admin'],
  viewer: ['viewer'],
  developer: ['developer'],
  'dev-reviewer': ['reviewer@nonprod/dev'],
  reviewer: ['reviewer'],
  oncall: ['oncall'],
  auditor: ['auditor'],
  'staging-viewer': ['viewer@nonprod/staging'],
};

export async function writeTestAccounts(
  path: string,
  extra: { users?: Record<string, string[]>; groups?: Record<string, string[]> } = {},
  /** account ids in the file, the same for every console given it (several replicas); without, each assigns its own */
  stableIds = false,
): Promise<void> {
  // at the test consoles' cost (TEST_PASSWORD_ENV): a production-cost hash here would be re-hashed at every start
  const hash = await hashPassword(TEST_PASSWORD, TEST_PASSWORD_COST);
  const users = { ...TEST_USERS, ...extra.users };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(
    path,
    JSON.stringify({
      users: Object.entries(users).map(([name, grants]) => ({
        // ids as an admin gives them when one auth.json serves several replicas: the same person on each
        ...(stableIds ? { id: `test-${name.replace(/@/g, '.')}` } : {}),
        name,
        passwordHash: hash,
        grants: grants.map(parseGrant),
      })),
      groups: Object.entries(extra.groups ?? {}).map(([group, grants]) => ({ group, grants: grants.map(parseGrant) })),
    }),
    { mode: 0o600 },
  );
}

export interface Signed {
  user: string;
  cookie: string;
  csrf: string;
}

export async function signIn(base: string, user: string, password = TEST_PASSWORD, origin = base): Promise<Signed> {
  const r = await fetch(`${base}/api/auth/signin`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Console-Request': '1', Origin: origin },
    body: JSON.stringify({ username: user, password }),
  });
  if (r.status !== 200) throw new Error(`sign-in as ${user}: ${r.status} ${await r.text()}`);
  const setCookie = r.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  const body = (await r.json()) as { csrfToken: string };
  return { user, cookie, csrf: body.csrfToken };
}

/** A request as a signed-in user (a mutation carries the CSRF token and the console's Origin). */
export async function as(
  s: Signed,
  base: string,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const method = init.method ?? 'GET';
  const r = await fetch(base + path, {
    method,
    headers: {
      Cookie: s.cookie,
      ...(method !== 'GET' ? { 'X-CSRF-Token': s.csrf, Origin: base } : {}),
      ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
  });
  const text = await r.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  return { status: r.status, body, text };
}

/** A GET as `s` whose body is read as text, with its status and headers (an export, a download). */
export async function download(
  s: Signed,
  base: string,
  path: string,
): Promise<{ status: number; headers: Headers; text: string }> {
  const r = await fetch(base + path, { headers: { Cookie: s.cookie } });
  return { status: r.status, headers: r.headers, text: await r.text() };
}
