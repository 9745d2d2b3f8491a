// Issue #21, item 4: the environment every permission depends on comes from the console's configuration
// (CONSOLE_ENVIRONMENTS; test consoles map each sandbox namespace to itself, and prod/* to prod), not from a label
// the app's owners write. A hostile owner labels a prod Argo CD Application `env: dev` with the admin kubeconfig:
// the console keeps it in prod — a reviewer of dev neither sees it nor sees or approves its prune preview, prod's
// auditor still sees it, the app says what the label claims against what the mapping decided, and the evidence
// records it once. The label is put back afterwards. The Application is the file's own estate's: the seed's
// edge-gateway on prod, as the seed deploys it (automated, no prune, server-side apply), into a governed
// namespace of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, AppsResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { kubectl } from '../../sandbox/state.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { seedFiles } from '../../sandbox/seed.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';
import { ownEstate, type Estate } from '../support/own-estate.ts';

const CONFLICT = "label says dev; the console's mapping says prod";

let estate: Estate;
let CLUSTER: string;
let APP_NAME: string;
let APP: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let devReviewer: Signed;
let prodAuditor: Signed;
let originalLabel = '';

/** The hostile owner's edit (and its undo): the Application's env label, written with the admin kubeconfig. */
const setLabel = (value: string) =>
  kubectl(CLUSTER, ['-n', 'argocd', 'label', 'application', APP_NAME, `env=${value}`, '--overwrite']);

const appAs = async (s: Signed) => as(s, con.url, `/api/apps/${APP}`);
const listAs = async (s: Signed) => (await as(s, con.url, '/api/apps')).body as unknown as AppsResponse;
const conflictsAs = async (s: Signed) =>
  (
    (await as(s, con.url, `/api/evidence?type=app.env-conflict&app=${encodeURIComponent(APP)}`)).body as {
      events?: EvidenceEvent[];
    }
  ).events;

beforeAll(async () => {
  const edge = Object.fromEntries(
    Object.entries(seedFiles())
      .filter(([path]) => path.startsWith('argo/edge-gateway/'))
      .map(([path, text]) => [path.replace('argo/', ''), text]),
  );
  estate = await ownEstate({
    name: 'environments',
    env: 'prod',
    governed: true,
    files: edge,
    argoApps: [
      {
        name: 'edge-gateway',
        path: 'edge-gateway',
        syncPolicy: { automated: { prune: false, selfHeal: true }, syncOptions: ['ServerSideApply=true'] },
      },
    ],
  });
  CLUSTER = estate.cluster;
  APP_NAME = estate.application('edge-gateway');
  APP = estate.argoAppId('edge-gateway');
  originalLabel = kubectl(CLUSTER, [
    ...['-n', 'argocd', 'get', 'application', APP_NAME],
    ...['-o', 'jsonpath={.metadata.labels.env}'],
  ]).trim();
  con = await startTestConsole(
    {},
    {
      accounts: {
        users: {
          // a reviewer of dev on every cluster: what the label would have made them on prod's app
          'any-dev-reviewer': ['reviewer@*/dev'],
          'prod-auditor': ['auditor@prod/prod'],
        },
      },
    },
  );
  devReviewer = await signIn(con.url, 'any-dev-reviewer');
  prodAuditor = await signIn(con.url, 'prod-auditor');
  await waitFor('the prod Application listed', async () => (await appAs(con.admin)).status === 200, {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
}, 300_000);

afterAll(async () => {
  await con?.close();
  // the Application, its label and annotation go with the estate
  await estate?.teardown();
}, 120_000);

describe('environments from the console configuration', () => {
  it('before: the app is prod by the mapping, and its label agrees', async () => {
    const a = ((await appAs(con.admin)).body as unknown as AppResponse).app;
    expect(a).toMatchObject({ env: 'prod', envSource: 'mapping' });
    expect(a.envConflict).toBeUndefined();
  });

  it('a prod Application labelled env: dev stays prod, and says so', async () => {
    setLabel('dev');
    let app: AppResponse['app'] | undefined;
    await waitFor(
      'the console sees the new label',
      async () => {
        app = ((await appAs(con.admin)).body as unknown as AppResponse).app;
        return app?.envConflict !== undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    // the card reads these fields: "label says dev; the console's mapping says prod"
    expect(app).toMatchObject({ env: 'prod', envSource: 'mapping', envConflict: CONFLICT });
    const summary = (await listAs(con.admin)).apps.find((x) => x.id === APP);
    expect(summary).toMatchObject({ env: 'prod', envConflict: CONFLICT });
    expect((await listAs(con.admin)).envs).not.toContain('unknown');
  });

  it("dev's reviewer neither sees the app nor sees or approves its prune preview", async () => {
    expect((await listAs(devReviewer)).apps.map((a) => a.id)).not.toContain(APP);
    expect([403, 404]).toContain((await appAs(devReviewer)).status);
    // a preview requested by someone who may (the admin): it is prod's
    const created = await as(con.admin, con.url, `/api/apps/${APP}/prune-previews`, { method: 'POST' });
    expect(created.status, created.text).toBe(200);
    const preview = (created.body as { preview: { id: string; env: string; cluster: string } }).preview;
    expect(preview).toMatchObject({ env: 'prod', cluster: 'prod' });
    expect([403, 404]).toContain((await as(devReviewer, con.url, `/api/prune-previews/${preview.id}`)).status);
    const queue = (await as(devReviewer, con.url, '/api/prune-previews')).body as { previews: Array<{ id: string }> };
    expect(queue.previews.map((p) => p.id)).not.toContain(preview.id);
    const approve = await as(devReviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'the label says dev' },
    });
    expect([403, 404]).toContain(approve.status);
    // nothing in the chain says they approved it
    const approvals = (
      (await as(con.admin, con.url, `/api/evidence?type=prune.approved&app=${encodeURIComponent(APP)}`)).body as {
        events: EvidenceEvent[];
      }
    ).events;
    expect(approvals.filter((e) => e.actor === 'any-dev-reviewer')).toEqual([]);
    // the preview stays visible to prod's auditor, who may not approve it
    const seen = await as(prodAuditor, con.url, `/api/prune-previews/${preview.id}`);
    expect(seen.status, seen.text).toBe(200);
    expect((seen.body as { viewer: { canApprove: boolean } }).viewer.canApprove).toBe(false);
  });

  it("prod's auditor still sees the app, in prod", async () => {
    expect((await listAs(prodAuditor)).apps.find((a) => a.id === APP)).toMatchObject({
      env: 'prod',
      envConflict: CONFLICT,
    });
    const r = await appAs(prodAuditor);
    expect(r.status, r.text).toBe(200);
    expect((r.body as unknown as AppResponse).app.env).toBe('prod');
  });

  it('the evidence records the conflict once, in prod, visible to prod and not to dev', async () => {
    let events: EvidenceEvent[] | undefined;
    await waitFor('the conflict recorded', async () => ((events = await conflictsAs(prodAuditor)) ?? []).length > 0, {
      timeoutMs: 20_000,
      intervalMs: 500,
    });
    // the label written again (the same conflict seen again): still one record
    setLabel('dev');
    kubectl(CLUSTER, ['-n', 'argocd', 'annotate', 'application', APP_NAME, `env-probe=${Date.now()}`, '--overwrite']);
    await new Promise((r) => setTimeout(r, 2000));
    events = await conflictsAs(prodAuditor);
    expect(events).toHaveLength(1);
    expect(events?.[0]).toMatchObject({
      type: 'app.env-conflict',
      actor: 'console',
      app: APP,
      cluster: 'prod',
      env: 'prod',
      data: { conflict: CONFLICT, envSource: 'mapping', label: { name: 'env', value: 'dev' } },
    });
    // a reviewer may read evidence, but only dev's
    expect(await conflictsAs(devReviewer)).toEqual([]);
  });

  it('the label put back: the app is plain prod again', async () => {
    kubectl(CLUSTER, ['-n', 'argocd', 'annotate', 'application', APP_NAME, 'env-probe-']);
    setLabel(originalLabel || 'prod');
    await waitFor(
      'the conflict gone',
      async () => ((await appAs(con.admin)).body as unknown as AppResponse).app?.envConflict === undefined,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(((await appAs(prodAuditor)).body as unknown as AppResponse).app).toMatchObject({
      env: 'prod',
      envSource: 'mapping',
    });
  });
});
