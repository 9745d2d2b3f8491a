// The sandbox forge: Gitea (built from its Go module by build.sh) on its own
// 127.0.0.1 port with SQLite. First start: an admin, a developer, a reviewer
// and the console's bot user, each with an API token (stored under the forge
// dir, mode 0600, never logged); the org `platform` with the public seed repo
// `digital-human` pushed; `main` protected: one approving review to merge, and
// no direct pushes except by the admin (the push whitelist: the sandbox's
// scenario helpers change main as it, sandbox/scenario.ts) and by Flux's image
// automation bot (dev's image tag, straight to main: sandbox/image-automation.ts).
//
// The Flux GitRepositories and Argo CD Applications fetch from this repo
// (anonymously: it is public). startForge() runs standalone (tests, dev
// scripts) or from startSandbox().
//
// Its users, state and API are forge-api.ts, its repositories forge-repos.ts; this module re-exports them.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { alive, freePort, startProcess, stopProcess, waitFor, type ProcRecord } from './procs.ts';
import { SEED_REPO, seedFiles } from './seed.ts';
import {
  FORGE_ORG,
  FORGE_USERS,
  api,
  forgeCredentials,
  must,
  type Credentials,
  type ForgeRole,
  type ForgeState,
} from './forge-api.ts';
import { createRepo } from './forge-repos.ts';

export { FORGE_ORG, FORGE_USERS, forgeAuthEnv, forgeCredentials, forgeGit } from './forge-api.ts';
export type { ForgeRole, ForgeState } from './forge-api.ts';
export { createForgeRepo, deleteForgeRepo } from './forge-repos.ts';

const FULL_NAMES: Record<Exclude<ForgeRole, 'admin'>, string> = {
  developer: 'Sandbox developer',
  reviewer: 'Sandbox reviewer',
  console: 'GitOps console (bot)',
  imageAutomation: 'Flux image automation (bot)',
};

const log = (msg: string) => {
  if (process.env.SANDBOX_QUIET !== '1')
    process.stderr.write(`[sandbox ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

function appIni(dir: string, port: number, staticRoot: string): string {
  const secret = randomBytes(32).toString('hex');
  return `APP_NAME = gitops-console sandbox forge
RUN_MODE = prod
RUN_USER = ${userInfo().username}
WORK_PATH = ${dir}

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${port}
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:${port}/
LOCAL_ROOT_URL = http://127.0.0.1:${port}/
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = ${staticRoot}
APP_DATA_PATH = ${join(dir, 'data')}

[database]
DB_TYPE = sqlite3
PATH = ${join(dir, 'data', 'gitea.db')}
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${join(dir, 'repos')}
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = ${secret}
PASSWORD_HASH_ALGO = pbkdf2_hi
MIN_PASSWORD_LENGTH = 8

[service]
DISABLE_REGISTRATION = true
DEFAULT_KEEP_EMAIL_PRIVATE = true
DEFAULT_ALLOW_CREATE_ORGANIZATION = false

[oauth2]
ENABLED = false

[mailer]
ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[queue]
TYPE = channel

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[migrations]
ALLOW_LOCALNETWORKS = true

[webhook]
ALLOWED_HOST_LIST = loopback

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = ${join(dir, 'log')}
`;
}

export interface StartForgeOptions {
  /** state dir (fresh or from an earlier start: then users and repo are kept) */
  dir: string;
  binDir: string;
  /** the port to listen on (a restart keeps its URL, which the clusters' Git sources name); else a free one */
  port?: number;
  /** more files for the seed commit, made at first start only (sandbox/sops.ts: the encrypted Secrets) */
  extraSeedFiles?: () => Record<string, string>;
}

export async function startForge(opts: StartForgeOptions): Promise<ForgeState> {
  const { dir } = opts;
  const giteaBin = join(opts.binDir, 'gitea');
  const staticRoot = join(opts.binDir, 'gitea-static');
  if (!existsSync(giteaBin) || !existsSync(staticRoot))
    throw new Error(`gitea is not built (${giteaBin}); run: bash sandbox/build.sh gitea`);
  const custom = join(dir, 'custom');
  const ini = join(custom, 'conf', 'app.ini');
  const credentialsFile = join(dir, 'credentials.json');
  const consoleTokensFile = join(dir, 'console-forge-tokens.json');
  const fresh = !existsSync(credentialsFile);
  if (fresh) rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(custom, 'conf'), { recursive: true });
  mkdirSync(join(dir, 'data'), { recursive: true });
  const port = opts.port ?? (await freePort());
  // the port may change at every start; the rest of app.ini (secrets, paths) stays
  const prior = existsSync(ini) ? readFileSync(ini, 'utf8') : appIni(dir, port, staticRoot);
  writeFileSync(
    ini,
    prior
      .replace(/^HTTP_PORT = .*$/m, `HTTP_PORT = ${port}`)
      .replace(/^ROOT_URL = .*$/m, `ROOT_URL = http://127.0.0.1:${port}/`)
      .replace(/^LOCAL_ROOT_URL = .*$/m, `LOCAL_ROOT_URL = http://127.0.0.1:${port}/`),
    { mode: 0o600 },
  );
  const env = {
    GITEA_WORK_DIR: dir,
    GITEA_CUSTOM: custom,
    // CI runs as root; Gitea refuses that without this
    GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT: 'true',
    HOME: join(dir, 'home'),
  };
  mkdirSync(env.HOME, { recursive: true });
  const cli = (args: string[]) =>
    execFileSync(giteaBin, ['--work-path', dir, '--custom-path', custom, '--config', ini, ...args], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
  const url = `http://127.0.0.1:${port}`;
  const proc = startProcess(
    'gitea',
    giteaBin,
    ['--work-path', dir, '--custom-path', custom, '--config', ini, 'web'],
    join(dir, 'gitea.log'),
    env,
  );
  let version = '';
  await waitFor(
    'gitea /api/v1/version',
    async () => {
      const r = await fetch(`${url}/api/v1/version`, { signal: AbortSignal.timeout(2000) });
      if (!r.ok) return false;
      version = ((await r.json()) as { version: string }).version;
      return true;
    },
    { proc, timeoutMs: 120_000, intervalMs: 300 },
  );
  const repo = { owner: FORGE_ORG, name: SEED_REPO, cloneUrl: `${url}/${FORGE_ORG}/${SEED_REPO}.git` };
  const state: ForgeState = {
    kind: 'gitea',
    version,
    port,
    url,
    dir,
    proc,
    repo,
    credentialsFile,
    consoleTokensFile,
  };
  if (fresh) {
    log(`forge: first start, creating users and ${FORGE_ORG}/${SEED_REPO}`);
    await provision(state, cli, opts.extraSeedFiles?.() ?? {});
  }
  writeConsoleTokens(state);
  return state;
}

function writeConsoleTokens(st: ForgeState): void {
  const c = forgeCredentials(st);
  const host = new URL(st.url).host;
  writeFileSync(st.consoleTokensFile, JSON.stringify({ [host]: { kind: 'gitea', token: c.users.console.token } }), {
    mode: 0o600,
  });
  chmodSync(st.consoleTokensFile, 0o600);
}

async function provision(
  st: ForgeState,
  cli: (args: string[]) => string,
  extraSeedFiles: Record<string, string>,
): Promise<void> {
  const pw = () => randomBytes(18).toString('base64url');
  const users = {} as Credentials['users'];
  const adminName = FORGE_USERS.admin;
  const adminPw = pw();
  cli([
    'admin',
    'user',
    'create',
    '--admin',
    '--username',
    adminName,
    '--password',
    adminPw,
    '--email',
    `${adminName}@sandbox.invalid`,
    '--must-change-password=false',
  ]);
  const basicAdmin = { basic: [adminName, adminPw] as [string, string] };
  const token = async (username: string, password: string, scopes: string[]) => {
    const t = (await must(
      `token for ${username}`,
      api(st.url, 'POST', `/users/${username}/tokens`, { basic: [username, password] }, { name: 'sandbox', scopes }),
    )) as { sha1: string };
    return t.sha1;
  };
  users.admin = { username: adminName, password: adminPw, token: await token(adminName, adminPw, ['all']) };
  for (const role of ['developer', 'reviewer', 'console', 'imageAutomation'] as const) {
    const username = FORGE_USERS[role];
    const password = pw();
    await must(
      `user ${username}`,
      api(st.url, 'POST', '/admin/users', basicAdmin, {
        username,
        password,
        email: `${username}@sandbox.invalid`,
        full_name: FULL_NAMES[role],
        must_change_password: false,
        send_notify: false,
        visibility: 'public',
      }),
    );
    users[role] = {
      username,
      password,
      // the image automation bot only pushes over git: repository scope alone
      token: await token(
        username,
        password,
        role === 'imageAutomation'
          ? ['write:repository']
          : ['write:repository', 'write:issue', 'read:user', 'read:organization'],
      ),
    };
  }
  const creds: Credentials = { url: st.url, users };
  writeFileSync(st.credentialsFile + '.tmp', JSON.stringify(creds, null, 2), { mode: 0o600 });
  const adminTok = { token: users.admin.token };
  await must(
    `org ${FORGE_ORG}`,
    api(st.url, 'POST', '/orgs', adminTok, { username: FORGE_ORG, visibility: 'public', full_name: 'Platform team' }),
  );
  await createRepo(
    st,
    users,
    SEED_REPO,
    { ...seedFiles(), ...extraSeedFiles },
    {
      description: 'GitOps repository seeded by the console sandbox',
      message: 'Seed digital-human services',
    },
  );
  // written last: its presence means "provisioned"
  writeFileSync(st.credentialsFile, readFileSync(st.credentialsFile + '.tmp'), { mode: 0o600 });
  rmSync(st.credentialsFile + '.tmp');
}

/**
 * The sandbox state's `git` entry: the repo the controllers fetch, the forge's (kept under that key, with the
 * forge's process: tests and tools read it).
 */
export function forgeGitState(forge: ForgeState): { port: number; root: string; proc: ProcRecord; url: string } {
  return { port: forge.port, root: join(forge.dir, 'repos'), proc: forge.proc, url: forge.repo.cloneUrl };
}

export async function stopForge(st: Pick<ForgeState, 'proc'>): Promise<void> {
  if (st.proc.pid > 0) await stopProcess(st.proc.pid);
}

/** Restarts Gitea with the same command line and port (after makeForgeUnreachable). */
export async function restartForge(st: ForgeState): Promise<ForgeState> {
  if (alive(st.proc.pid)) return st;
  const [binPath = '', ...args] = st.proc.cmd;
  const proc = startProcess('gitea', binPath, args, st.proc.log, {
    GITEA_WORK_DIR: st.dir,
    GITEA_CUSTOM: join(st.dir, 'custom'),
    GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT: 'true',
    HOME: join(st.dir, 'home'),
  });
  await waitFor('gitea /api/v1/version', async () => (await fetch(`${st.url}/api/v1/version`)).ok, {
    proc,
    timeoutMs: 120_000,
  });
  return { ...st, proc };
}

export async function forgeReady(st: Pick<ForgeState, 'url'>): Promise<boolean> {
  try {
    return (await fetch(`${st.url}/api/v1/version`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}
