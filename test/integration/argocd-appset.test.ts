// ApplicationSets with Argo CD's real applicationset-controller (issue 24). The seeded `web` (a Git directory
// generator over argo/web/*) and `tenants` (a list generator) on nonprod. When a generator's output shrinks, the
// controller's DELETE of the Application is denied by the console's admission policy until a reviewer approved
// the console's prune preview of the shrink; then the controller deletes it (and the application controller the
// objects its resources finalizer takes), and the evidence chain holds each step. A shrink over the
// ApplicationSet's limit needs the override; Git unreachable plans nothing (unknown, not "all removed"); an
// Application annotated by hand, or a reviewer scoped to one environment, approves nothing.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSetView } from '../../src/api/appsets.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { webDirFiles } from '../../sandbox/seed.ts';
import { holdsFor, waitFor } from '../../sandbox/procs.ts';
import { kubectl } from '../../sandbox/state.ts';
import {
  commitAndPushRetrying,
  gitOffline,
  gitOnline,
  waitForArgoSynced,
  writeRepoFile,
} from '../../sandbox/scenario.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';

const CLUSTER = 'nonprod';
type Json = Record<string, unknown>;
type Preview = {
  id: string;
  status: string;
  statusReason: string | null;
  plan: string;
  reasons: string[];
  env: string;
  requiredApprovals: number;
  confirmation: string | null;
  deletedBy?: string;
  candidates: Array<{ ref: { name: string; kind: string; namespace?: string }; deletable: boolean }>;
};

let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let reviewer: Signed;
let reviewer2: Signed;
let stagingReviewer: Signed;
let oncall: Signed;

const appExists = (name: string) =>
  kubectl(CLUSTER, ['-n', 'argocd', 'get', 'application', name, '--ignore-not-found', '-o', 'name']).trim() !== '';
const liveIn = (ns: string, kindName: string) =>
  kubectl(CLUSTER, ['-n', ns, 'get', kindName, '--ignore-not-found', '-o', 'name']).trim() !== '';
const appSetError = (name: string) =>
  (
    (
      (JSON.parse(kubectl(CLUSTER, ['-n', 'argocd', 'get', 'applicationset', name, '-o', 'json'])) as Json).status as
        { conditions?: Array<{ type: string; status: string; message?: string }> } | undefined
    )?.conditions ?? []
  ).find((c) => c.type === 'ErrorOccurred' && c.status === 'True')?.message ?? '';
const DENIED = /gitops-console-appset-shrink.*needs an approved prune preview in the GitOps console/;

async function view(name: string): Promise<AppSetView> {
  const r = await as(developer, con.url, `/api/appsets/${CLUSTER}/argocd/${name}`);
  expect(r.status, r.text).toBe(200);
  return (r.body as { appset: AppSetView }).appset;
}
async function requestPreview(name: string, who = developer): Promise<{ status: number; preview: Preview }> {
  const r = await as(who, con.url, `/api/appsets/${CLUSTER}/argocd/${name}/prune-previews`, { method: 'POST' });
  return { status: r.status, preview: (r.body as { preview: Preview }).preview };
}
async function evidence(type: string): Promise<EvidenceEvent[]> {
  const r = await as(con.admin, con.url, `/api/evidence?type=${type}&limit=1000`);
  return (r.body as { events: EvidenceEvent[] }).events;
}
function setTenants(tenants: string[]): void {
  kubectl(CLUSTER, [
    ...['-n', 'argocd', 'patch', 'applicationset', 'tenants', '--type', 'json', '-p'],
    JSON.stringify([
      { op: 'replace', path: '/spec/generators/0/list/elements', value: tenants.map((tenant) => ({ tenant })) },
    ]),
  ]);
}

beforeAll(async () => {
  con = await startTestConsole(
    {},
    {
      accounts: {
        users: {
          'nonprod-developer': ['developer@nonprod'],
          'nonprod-reviewer': ['reviewer@nonprod'],
          'nonprod-reviewer-2': ['reviewer@nonprod'],
          'staging-reviewer': ['reviewer@nonprod/staging'],
        },
      },
    },
  );
  developer = await signIn(con.url, 'nonprod-developer');
  reviewer = await signIn(con.url, 'nonprod-reviewer');
  reviewer2 = await signIn(con.url, 'nonprod-reviewer-2');
  stagingReviewer = await signIn(con.url, 'staging-reviewer');
  oncall = await signIn(con.url, 'oncall');
  for (const a of ['web-dev', 'web-staging', 'tenant-alpha', 'tenant-beta', 'tenant-gamma'])
    await waitForArgoSynced(CLUSTER, a);
}, 300_000);

afterAll(async () => {
  await gitOnline().catch(() => undefined);
  // the seed's state again: the directory back in Git, the three tenants; the controller re-creates the Applications
  commitAndPushRetrying('Restore argo/web/staging (appset test)', (w) => {
    for (const [p, c] of Object.entries(webDirFiles('staging'))) writeRepoFile(w, p, c);
  });
  setTenants(['alpha', 'beta', 'gamma']);
  await waitFor(
    'the ApplicationSets generate their Applications again',
    async () => ['web-staging', 'tenant-beta', 'tenant-gamma'].every(appExists),
    {
      timeoutMs: 120_000,
      intervalMs: 2000,
    },
  ).catch(() => undefined);
  await con?.close();
}, 180_000);

describe('ApplicationSets with the real applicationset-controller', () => {
  it('lists the ApplicationSets with the Applications they generate, and their generators’ parameters now', async () => {
    const r = await as(developer, con.url, '/api/appsets');
    expect(r.status).toBe(200);
    const sets = (r.body as { appsets: Array<{ name: string; applications: Array<{ name: string }> }> }).appsets;
    expect(sets.find((s) => s.name === 'web')?.applications.map((a) => a.name)).toEqual(['web-dev', 'web-staging']);
    expect(sets.find((s) => s.name === 'tenants')?.applications.map((a) => a.name)).toEqual([
      'tenant-alpha',
      'tenant-beta',
      'tenant-gamma',
    ]);
    const web = await view('web');
    expect(web.generatorResults[0]?.kind).toBe('git-directories');
    // argo/web/prod is excluded on nonprod: the console applies the exclude as the controller does
    expect(web.generatorResults[0]?.params?.map((p) => p['path.basename'])).toEqual(['dev', 'staging']);
    expect(web.generated).toEqual(['web-dev', 'web-staging']);
    expect(web.shrink.state).toBe('nothing');
    expect(web.owned.every((a) => a.generated === true && a.cascades)).toBe(true);
  });

  it('a directory removed from Git: the controller’s deletion is denied until a reviewer approves the console’s preview', async () => {
    commitAndPushRetrying('Remove argo/web/staging (appset test)', (w) => {
      rmSync(join(w, 'argo/web/staging'), { recursive: true, force: true });
    });
    // the applicationset-controller tries to delete web-staging: the policy denies it
    await waitFor('the controller’s deletion of web-staging is denied', async () => DENIED.test(appSetError('web')), {
      timeoutMs: 120_000,
      intervalMs: 2000,
    });
    expect(appExists('web-staging')).toBe(true);
    expect(liveIn('staging', 'deployment/web-frontend')).toBe(true);
    // the console sees the same shrink, and that the controller is held
    const v = await view('web');
    expect(v.generated).toEqual(['web-dev']);
    expect(v.shrink).toMatchObject({ state: 'shrink', removed: [{ name: 'web-staging', cascades: true }] });
    expect(v.heldByConsole).toBe(true);

    // someone who goes around the console: the note annotation on the Application approves nothing
    kubectl(CLUSTER, [
      ...['-n', 'argocd', 'annotate', '--overwrite', 'application', 'web-staging'],
      'gitops-console.dev/prune-approved=by-hand',
    ]);
    kubectl(CLUSTER, [
      ...['-n', 'argocd', 'annotate', '--overwrite', 'applicationset', 'web'],
      'argocd.argoproj.io/application-set-refresh=true',
    ]);
    await holdsFor('the hand-annotated Application stays (the shrink still denied)', 5000, () =>
      appExists('web-staging'),
    );
    expect(appExists('web-staging')).toBe(true);
    expect(appSetError('web')).toMatch(DENIED);
    kubectl(CLUSTER, ['-n', 'argocd', 'annotate', 'application', 'web-staging', 'gitops-console.dev/prune-approved-']);

    // the developer previews the shrink: the Application and the objects its finalizer deletes
    const { status, preview } = await requestPreview('web');
    expect(status).toBe(200);
    expect(preview.plan).toBe('ready');
    expect(preview.env).toBe('*');
    expect(preview.deletedBy).toBe('controller');
    const names = preview.candidates
      .filter((c) => c.deletable)
      .map((c) => `${c.ref.kind}/${c.ref.namespace}/${c.ref.name}`);
    expect(names.sort()).toEqual(
      [
        'Application/argocd/web-staging',
        'ConfigMap/staging/web-frontend-config',
        'Deployment/staging/web-frontend',
      ].sort(),
    );
    // a reviewer of one environment cannot approve what reaches every environment of the cluster
    const scoped = await as(stagingReviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'looks fine from staging' },
    });
    // (it is not even theirs to see: 404, as for any preview outside their scope)
    expect([403, 404]).toContain(scoped.status);
    expect(appExists('web-staging')).toBe(true);
    const ok = await as(reviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'staging web retired' },
    });
    expect(ok.status, ok.text).toBe(200);
    await waitFor(
      'the controller deleted web-staging and its objects',
      async () => !appExists('web-staging') && !liveIn('staging', 'deployment/web-frontend'),
      {
        timeoutMs: 120_000,
        intervalMs: 2000,
      },
    );
    expect(liveIn('staging', 'configmap/web-frontend-config')).toBe(false);
    expect(appExists('web-dev')).toBe(true);

    // the evidence chain: requested (of the ApplicationSet), approved, each uid listed, executed with the refresh
    const requested = (await evidence('prune.requested')).find((e) => (e.data as Json).previewId === preview.id);
    expect(requested?.data).toMatchObject({ applicationSet: 'argocd/web', plan: 'ready' });
    expect((await evidence('prune.approved')).some((e) => (e.data as Json).previewId === preview.id)).toBe(true);
    // the stamps (the approvals listed); once the objects are gone the console takes its entries off the list
    // again, each a `withdrawn` record of the same type (how soon depends on the machine): not counted here
    const stamps = (await evidence('prune.stamp')).filter(
      (e) => (e.data as Json).previewId === preview.id && !(e.data as Json).withdrawn,
    );
    expect(stamps.map((e) => (e.data as Json).object as string).sort()).toEqual(
      [
        `${CLUSTER}/argoproj.io/Application/argocd/web-staging`,
        `${CLUSTER}/core/ConfigMap/staging/web-frontend-config`,
        `${CLUSTER}/apps/Deployment/staging/web-frontend`,
      ].sort(),
    );
    const executed = (await evidence('prune.executed')).find((e) => (e.data as Json).previewId === preview.id);
    expect(executed?.data).toMatchObject({
      status: 'done',
      stamped: 3,
      applicationSet: 'argocd/web',
      refreshed: 'refreshed',
    });
  }, 400_000);

  it('a list generator shrink over the limit needs the override: two reviewers and the typed confirmation', async () => {
    setTenants(['alpha']);
    await waitFor('the controller’s deletions are denied', async () => DENIED.test(appSetError('tenants')), {
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
    const { preview } = await requestPreview('tenants');
    expect(preview.plan).toBe('needs-override');
    expect(preview.reasons[0]).toMatch(
      /2 of 3 Applications \(67%\) would be deleted, over the ApplicationSet limit of 50%/,
    );
    expect(preview.requiredApprovals).toBe(2);
    expect(preview.confirmation).toBe('delete 2 Applications of tenants');
    const noConfirm = await as(reviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'no typing' },
    });
    expect(noConfirm.status).not.toBe(200);
    expect(['tenant-beta', 'tenant-gamma'].every(appExists)).toBe(true);
    for (const who of [reviewer, reviewer2]) {
      const r = await as(who, con.url, `/api/prune-previews/${preview.id}/approve`, {
        method: 'POST',
        body: { comment: 'tenants offboarded', confirmation: preview.confirmation ?? '' },
      });
      expect(r.status, r.text).toBe(200);
    }
    await waitFor(
      'the controller deleted tenant-beta and tenant-gamma',
      async () => !appExists('tenant-beta') && !appExists('tenant-gamma'),
      {
        timeoutMs: 120_000,
        intervalMs: 2000,
      },
    );
    expect(appExists('tenant-alpha')).toBe(true);
    expect(liveIn('staging', 'configmap/beta-tenant-config')).toBe(false);
    expect(liveIn('staging', 'configmap/alpha-tenant-config')).toBe(true);
  }, 300_000);

  it('Git unreachable: the Git generator’s output is unknown and the preview plans nothing, never "all removed"', async () => {
    await gitOffline();
    try {
      const v = await view('web');
      expect(v.generated).toBeNull();
      expect(v.unknown).toMatch(/reading .* failed/);
      expect(v.shrink.state).toBe('unknown');
      expect(v.shrink.removed).toEqual([]);
      const { status, preview } = await requestPreview('web');
      expect(status).toBe(200);
      expect(preview.plan).toBe('unknown');
      expect(preview.status).toBe('void');
      expect(preview.candidates).toEqual([]);
    } finally {
      await gitOnline();
    }
    expect(appExists('web-dev')).toBe(true);
  }, 120_000);

  it('freezes an Application the ApplicationSet generates: its controller leaves the pause alone; the end restores both exactly', async () => {
    const appJson = () =>
      JSON.parse(kubectl(CLUSTER, ['-n', 'argocd', 'get', 'application', 'web-dev', '-o', 'json'])) as Json;
    const setSpec = () =>
      (JSON.parse(kubectl(CLUSTER, ['-n', 'argocd', 'get', 'applicationset', 'web', '-o', 'json'])) as Json)
        .spec as Json;
    const policy = () => (appJson().spec as Json).syncPolicy;
    const refreshSet = () =>
      kubectl(CLUSTER, [
        ...['-n', 'argocd', 'annotate', '--overwrite', 'applicationset', 'web'],
        'argocd.argoproj.io/application-set-refresh=true',
      ]);
    const refreshed = async () =>
      waitFor(
        'the refresh is done',
        async () => {
          const md = (
            JSON.parse(kubectl(CLUSTER, ['-n', 'argocd', 'get', 'applicationset', 'web', '-o', 'json'])) as Json
          ).metadata as Json;
          return !('argocd.argoproj.io/application-set-refresh' in ((md.annotations as Json | undefined) ?? {}));
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
    // why the ApplicationSet is paused too: a pause of the Application alone is undone at its next reconcile
    kubectl(CLUSTER, [
      ...['-n', 'argocd', 'patch', 'application', 'web-dev', '--type', 'merge', '-p'],
      JSON.stringify({ spec: { syncPolicy: { automated: { enabled: false } } } }),
    ]);
    refreshSet();
    await refreshed();
    await waitFor(
      'the controller undid the hand pause',
      async () => (policy() as { automated: { enabled?: boolean } }).automated.enabled !== false,
      {
        timeoutMs: 30_000,
        intervalMs: 1000,
      },
    );
    const priorPolicy = JSON.stringify(policy());
    const priorSet = JSON.stringify(setSpec());
    const r = await as(oncall, con.url, '/api/freezes', {
      method: 'POST',
      body: { cluster: CLUSTER, app: `${CLUSTER}/argocd/application/web-dev`, reason: 'web incident', minutes: 10 },
    });
    expect(r.status, r.text).toBe(200);
    const id = (r.body as { freeze: { id: string } }).freeze.id;
    expect((policy() as { automated: { enabled?: boolean } }).automated.enabled).toBe(false);
    expect(setSpec().ignoreApplicationDifferences).toEqual([{ name: 'web-dev', jsonPointers: ['/spec/syncPolicy'] }]);
    // the applicationset-controller reconciles (asked to, twice): the pause and the freeze annotations stay
    for (let i = 0; i < 2; i++) {
      refreshSet();
      await refreshed();
    }
    expect((policy() as { automated: { enabled?: boolean } }).automated.enabled).toBe(false);
    expect(((appJson().metadata as Json).annotations as Json)['gitops-console.dev/freeze-id']).toBe(id);
    // the evidence names what the freeze changed on the ApplicationSet
    const started = (await evidence('freeze.started')).find((e) => (e.data as Json).freezeId === id);
    expect(JSON.stringify(started?.data)).toContain('"appSet":{"namespace":"argocd","name":"web"');
    const end = await as(oncall, con.url, `/api/freezes/${id}/end`, { method: 'POST', body: { decisions: [] } });
    expect(end.status, end.text).toBe(200);
    expect(JSON.stringify(policy())).toBe(priorPolicy);
    expect(JSON.stringify(setSpec())).toBe(priorSet);
  }, 180_000);
});
