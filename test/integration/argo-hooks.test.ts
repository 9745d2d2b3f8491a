// Issue 40 item 13: an Argo CD hook Job is shown as a hook (its type and last run), never with a sync verdict.
// Read-only, on the seed's `ledger-staging` (its PreSync Job ledger-db-migrate and PostSync Job ledger-smoke-test):
// the console's tree and diff through the HTTP API, signed in as a viewer, against what Argo CD itself recorded in
// the Application's `status.operationState.syncResult.resources[]` (read with kubectl here, never written down).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse, TreeResponse } from '../../src/api/schemas.ts';
import { appPath } from '../../src/api/schemas.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';

type Json = Record<string, unknown>;
interface RecordedHook {
  kind: string;
  namespace: string;
  name: string;
  hookType: string;
  hookPhase: string;
  message?: string;
}

const CLUSTER = 'nonprod';
const APP_NAME = 'ledger-staging';

/** What Argo CD recorded of the hooks of its last sync operation, and the objects it lists as hooks. */
function argoRecord(): { phase: string; hooks: RecordedHook[]; listed: string[] } {
  const app = JSON.parse(kubectl(CLUSTER, ['-n', 'argocd', 'get', 'application', APP_NAME, '-o', 'json'])) as Json;
  const status = (app.status ?? {}) as Json;
  const op = (status.operationState ?? {}) as Json;
  const tasks = (((op.syncResult ?? {}) as Json).resources ?? []) as Json[];
  return {
    phase: String(op.phase ?? ''),
    hooks: tasks.filter((t) => typeof t.hookType === 'string' && t.hookType) as unknown as RecordedHook[],
    listed: ((status.resources ?? []) as Json[]).filter((r) => r.hook === true).map((r) => `${r.kind}/${r.name}`),
  };
}

let con: Awaited<ReturnType<typeof startTestConsole>>;
let viewer: Signed;
let appUrl: string;

beforeAll(async () => {
  con = await startTestConsole();
  viewer = await signIn(con.url, 'viewer');
  let id = '';
  await waitFor(
    `${APP_NAME} listed`,
    async () => {
      const r = await as(viewer, con.url, '/api/apps');
      const apps = (r.body.apps ?? []) as Array<{ id: string; name: string; controller: string }>;
      id = apps.find((a) => a.name === APP_NAME && a.controller === 'argocd')?.id ?? '';
      return !!id;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  appUrl = `/api/apps/${appPath(id)}`;
}, 120_000);

afterAll(async () => {
  await con?.close();
});

describe('Argo CD hooks in the tree and the diff (ledger-staging)', () => {
  it('the seed’s last sync ran hooks, and Argo CD lists its hook Jobs as hooks', () => {
    const rec = argoRecord();
    // the seed's premise, checked rather than assumed: without a recorded hook run the test would prove nothing
    expect(rec.hooks.map((h) => h.name).sort()).toEqual(['ledger-db-migrate', 'ledger-smoke-test']);
    expect(rec.listed.sort()).toEqual(['Job/ledger-db-migrate', 'Job/ledger-smoke-test']);
  });

  it('the tree shows each hook Job as a hook with the phase Argo CD recorded, and no sync verdict', async () => {
    let tree: TreeResponse | undefined;
    let rec = argoRecord();
    // the console's informers answer within moments of Argo CD's write: the same record on both sides
    await waitFor(
      'the tree shows the hooks Argo CD recorded',
      async () => {
        rec = argoRecord();
        const r = await as(viewer, con.url, `${appUrl}/tree`);
        tree = r.body as unknown as TreeResponse;
        return rec.hooks.every((h) => tree?.nodes.find((n) => n.ref.name === h.name)?.hook?.phase === h.hookPhase);
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    ).catch(() => undefined);
    const nodes = tree?.nodes ?? [];
    for (const h of rec.hooks) {
      const n = nodes.find((x) => x.ref.kind === h.kind && x.ref.namespace === h.namespace && x.ref.name === h.name);
      expect(n, `${h.kind} ${h.name} in the tree`).toBeDefined();
      expect(n?.hook).toMatchObject({ type: h.hookType, phase: h.hookPhase, from: 'argocd' });
      if (h.message) expect(n?.hook?.message).toBe(h.message);
      expect(n?.sync).toBeUndefined();
    }
    // no hook has a sync verdict, and the sync summary counts only what is no hook
    const hooks = nodes.filter((n) => n.hook);
    expect(hooks.length).toBeGreaterThanOrEqual(2);
    expect(hooks.filter((n) => n.sync)).toEqual([]);
    const synced = nodes.filter((n) => n.sync === 'Synced').length;
    expect(tree?.summary.sync.Synced).toBe(synced);
    // the app's own objects keep their verdict
    expect(nodes.find((n) => n.ref.kind === 'Deployment' && n.ref.name === 'ledger')?.sync).toBe('Synced');
  });

  it('the diff has a hook row for each hook Job, with Argo CD’s phase: neither unchanged nor a drift', async () => {
    const r = await as(viewer, con.url, `${appUrl}/diff`);
    expect(r.status).toBe(200);
    const diff = r.body as unknown as DiffResponse;
    expect(diff.state).toBe('ok');
    const rec = argoRecord();
    for (const h of rec.hooks) {
      const row = diff.objects.find((o) => o.ref.kind === h.kind && o.ref.name === h.name);
      expect(row, `${h.kind} ${h.name} in the diff`).toBeDefined();
      expect(row?.status).toBe('hook');
      expect(row?.mode).toBe('not-compared');
      expect(row?.hook).toMatchObject({ type: h.hookType, phase: h.hookPhase });
      expect(row?.changes.filter((c) => c.class === 'drift')).toEqual([]);
    }
    // no row of an object annotated as a hook says unchanged (or anything but hook)
    const annotatedRows = diff.objects.filter((o) =>
      /argocd\.argoproj\.io\/hook:/.test(o.desiredYaml ?? o.liveYaml ?? ''),
    );
    expect(annotatedRows.length).toBeGreaterThanOrEqual(2);
    expect(annotatedRows.filter((o) => o.status !== 'hook')).toEqual([]);
    expect(diff.counts.hook).toBe(annotatedRows.length);
  });
});
