// e2e specs on their own estates (test/support/own-estate.ts): the shared e2e console (e2e/global-setup.ts) maps
// the estate's namespace `t-<env>-*` to its environment (test/support/sandbox-environments.ts); a spec waits
// until that console shows its app (and, when asked, at the commit the spec pushed) before the browser opens it.
import { test } from '@playwright/test';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../../test/support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate, type EstateEnv } from '../../test/support/own-estate.ts';

export const E2E_BASE = (): string => {
  const base = process.env.E2E_BASE_URL;
  if (!base) throw new Error('E2E_BASE_URL is not set (e2e/global-setup.ts)');
  return base;
};

let admin: Promise<Signed> | undefined;
/** An admin session on the shared e2e console (signed in once per worker). */
export const e2eAdmin = (): Promise<Signed> => (admin ??= signIn(E2E_BASE(), 'admin'));

interface AppView {
  env?: string;
  source?: { revisionObserved?: string };
  inventory?: unknown[];
}

/**
 * Until the e2e console lists `appId` in `env` (the estate's mapping) with its inventory, and — given `sha` — has
 * observed the controller applying that commit.
 */
export async function consoleShows(
  appId: string,
  opts: { env?: string; sha?: string; base?: string; session?: Signed; timeoutMs?: number } = {},
): Promise<void> {
  const base = opts.base ?? E2E_BASE();
  const session = opts.session ?? (await e2eAdmin());
  let last = '';
  await waitFor(
    `the console at ${base} shows ${appId}${opts.sha ? ` at ${opts.sha.slice(0, 8)}` : ''}`,
    async () => {
      const r = await as(session, base, `/api/apps/${appId}`);
      if (r.status !== 200) {
        last = `${r.status} ${r.text.slice(0, 200)}`;
        return false;
      }
      const app = (r.body as { app?: AppView }).app ?? {};
      last = `env=${String(app.env)} observed=${String(app.source?.revisionObserved)}`;
      return (
        (!opts.env || app.env === opts.env) &&
        (app.inventory?.length ?? 0) > 0 &&
        (!opts.sha || String(app.source?.revisionObserved ?? '').endsWith(opts.sha))
      );
    },
    { timeoutMs: opts.timeoutMs ?? 120_000, intervalMs: 500 },
  ).catch((e: unknown) => {
    throw new Error(`${e instanceof Error ? e.message : String(e)} (last: ${last})`);
  });
}

/**
 * The spec's own estate from the seed's template for `env`: made before its tests (and shown by the console at its
 * first commit), deleted after them. Returns a getter for use inside the tests.
 */
export function specEstate(name: string, env: EstateEnv): () => Estate {
  let estate: Estate | undefined;
  test.beforeAll(async () => {
    test.setTimeout(300_000);
    estate = await ownEstate({ name, env, files: digitalHumanTemplate(env) });
    await consoleShows(estate.appId(), { env, sha: estate.seedCommit });
  });
  test.afterAll(async () => {
    test.setTimeout(180_000);
    await estate?.teardown();
  });
  return () => {
    if (!estate) throw new Error(`the ${name} estate was not made (its beforeAll failed)`);
    return estate;
  };
}
