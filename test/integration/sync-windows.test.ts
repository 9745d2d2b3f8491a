// Argo CD sync windows, read live (issue 43), held out against the real Argo CD: the file's own AppProject gets a
// deny window that opens a minute from now and lasts two; at three instants (before, inside, after) the console's
// reading (as the console's own least-privilege identity) agrees with what the real application controller does
// with a commit: before, the app syncs it; inside, the console says automated sync is blocked by the window (until
// its end) and Argo CD leaves the new commit unsynced; after, the console says allowed and Argo CD syncs it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppResponse, EnvCalendarResponse } from '../../src/api/schemas.ts';
import { holdsFor, waitFor } from '../../sandbox/procs.ts';
import { argoApp, argoRefresh } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { authedFetch, startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

type Json = Record<string, unknown>;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let estate: Estate;
let project: string;
const APP = 'web';
const cm = (value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sw-settings\ndata:\n  value: "${value}"\n`;

beforeAll(async () => {
  // the project first: an Application naming a project that does not exist yet is not compared at all
  project = `sw-${Math.random().toString(36).slice(2, 8)}`;
  kubectl(
    'nonprod',
    ['apply', '--server-side', '--field-manager=test-estate', '-f', '-'],
    JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: project, namespace: 'argocd' },
      spec: {
        sourceRepos: ['*'],
        destinations: [{ server: '*', namespace: '*' }],
        namespaceResourceWhitelist: [{ group: '*', kind: '*' }],
      },
    }),
  );
  estate = await ownEstate({
    name: 'sync-windows',
    env: 'staging',
    files: { 'sw/settings.yaml': cm('one') },
    argoApps: [{ name: APP, path: 'sw', project }],
  });
  con = await startTestConsole();
  await estate.waitArgoSynced(APP, estate.seedCommit).catch((e: Error) => {
    const conditions = (argoApp(estate.cluster, estate.application(APP)).status as Json | undefined)?.conditions;
    throw new Error(`${e.message}; conditions: ${JSON.stringify(conditions)}`);
  });
}, 300_000);

afterAll(async () => {
  await con?.close();
  await estate?.teardown();
  kubectl('nonprod', ['-n', 'argocd', 'delete', 'appproject', project, '--ignore-not-found']);
}, 120_000);

const windows = async () => {
  const r = await authedFetch(`${con.url}/api/apps/${estate.argoAppId(APP)}`);
  expect(r.status).toBe(200);
  return ((await r.json()) as AppResponse).syncWindows;
};
/** Argo CD's comparison (status.sync: the revision it compared) and what it last deployed (status.history) */
const synced = () => {
  const st = (argoApp(estate.cluster, estate.application(APP)).status as Json | undefined) ?? {};
  const s = st.sync as Json | undefined;
  const history = (st.history as Array<{ revision?: string }> | undefined) ?? [];
  return { status: s?.status, compared: s?.revision, deployed: history.at(-1)?.revision };
};
const push = (value: string) =>
  estate.push(`sync-windows: ${value}`, (tree) => writeFileSync(join(tree, 'sw', 'settings.yaml'), cm(value)));

describe('Argo CD sync windows: the console reads them as the application controller acts on them', () => {
  it('before, inside and after a deny window, the console and Argo CD agree on automated syncs', async () => {
    // the window: from the minute at least 50 s from now, for 2 minutes (UTC)
    const start = Math.ceil((Date.now() + 50_000) / 60_000) * 60_000;
    const end = start + 120_000;
    const at = new Date(start);
    kubectl(estate.cluster, [
      '-n',
      'argocd',
      'patch',
      'appproject',
      project,
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          syncWindows: [
            {
              kind: 'deny',
              schedule: `${at.getUTCMinutes()} ${at.getUTCHours()} * * *`,
              duration: '2m',
              applications: [estate.application(APP)],
              description: 'release freeze',
            },
          ],
        },
      }),
    ]);

    // before: allowed, the next change is the window's start; a commit is synced
    await waitFor('the console reads the window', async () => ((await windows())?.windows.length ?? 0) === 1, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    const before = await windows();
    expect(before).toMatchObject({ project, status: 'ok', automated: 'allowed', manual: 'allowed' });
    expect(before?.nextChange).toBe(new Date(start).toISOString());
    const first = push('two');
    argoRefresh(estate.cluster, estate.application(APP));
    await estate.waitArgoSynced(APP, first, { timeoutMs: Math.max(20_000, start - Date.now() - 2000) });

    // inside: blocked until the window's end; a commit pushed now stays unsynced while the console says so
    await waitFor('the window is open', async () => Date.now() > start + 1500, {
      timeoutMs: start - Date.now() + 10_000,
      intervalMs: 500,
    });
    const inside = await windows();
    expect(inside).toMatchObject({ automated: 'blocked', manual: 'blocked' });
    expect(inside?.blockedBy).toMatchObject({
      window: { description: 'release freeze' },
      until: new Date(end).toISOString(),
    });
    // the environment's calendar (computed by the console from the live AppProject) has the same stretch
    const from = encodeURIComponent(new Date(start - 3_600_000).toISOString());
    const cal = (await (
      await authedFetch(`${con.url}/api/envs/staging/calendar?from=${from}&days=1`)
    ).json()) as EnvCalendarResponse;
    expect(cal.entries.filter((e) => e.type === 'sync-window' && e.project === project)).toEqual([
      expect.objectContaining({
        kind: 'deny',
        label: 'release freeze',
        from: new Date(start).toISOString(),
        until: new Date(end).toISOString(),
        apps: [estate.argoAppId(APP)],
      }),
    ]);
    const held = push('three');
    argoRefresh(estate.cluster, estate.application(APP));
    await waitFor(
      'Argo CD sees the new commit',
      async () => synced().status === 'OutOfSync' && synced().compared === held,
      {
        timeoutMs: 30_000,
        intervalMs: 1000,
      },
    );
    await holdsFor(
      'Argo CD does not sync inside the deny window, and the console says blocked',
      Math.min(25_000, end - Date.now() - 8000),
      async () => synced().deployed === first && (await windows())?.automated === 'blocked',
      { intervalMs: 2000 },
    );
    expect(synced()).toMatchObject({ status: 'OutOfSync', deployed: first });

    // after: allowed again, and the held commit is synced
    await waitFor('the window is over', async () => Date.now() > end + 1500, {
      timeoutMs: end - Date.now() + 10_000,
      intervalMs: 500,
    });
    expect(await windows()).toMatchObject({ automated: 'allowed' });
    argoRefresh(estate.cluster, estate.application(APP));
    await estate.waitArgoSynced(APP, held, { timeoutMs: 90_000 });
  }, 420_000);
});
