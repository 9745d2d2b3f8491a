// Flux HelmReleases on the real helm-controller (issue 26, part 4): the seed's HelmRelease `status-page` on the
// file's own estate (test/support/helm-estate.ts: its own repository and Kustomization, a governed namespace mapped
// to dev; the seed's release is only read) installs a chart from the sandbox's OCI registry (pushed with helm at
// first start), values inline and from a ConfigMap.
// The console lists it with its tree (helm-controller's inventory), renders it as helm-controller does (helm
// template with the composed values) and diffs it; a value changed in Git while the release is suspended shows
// with helm-controller as the field owner; a chart downgrade that removes an object is held by the admission policy
// (helm-controller's own delete is denied without an approved preview). The estate is deleted at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, DiffResponse, TreeResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { kubectlAs } from '../../sandbox/identities.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { RECORDER_ON, startTestConsole } from '../support/console.ts';
import { helmEstate, type HelmEstate, type ReleaseOptions } from '../support/helm-estate.ts';

/** the object chart 0.2.0 adds (sandbox/helm-charts.ts) */
const BANNER = 'status-page-banner';
const DENIED = /needs an approved prune preview in the GitOps console/;

let helm: HelmEstate;
/** the estate's HelmRelease in the console, and its namespace (made in beforeAll) */
let HR: string;
let NS: string;
let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let oncall: Signed;

async function app(): Promise<AppResponse> {
  const r = await as(developer, con.url, `/api/apps/${HR}`);
  expect(r.status, r.text).toBe(200);
  return r.body as AppResponse;
}
async function diff(): Promise<DiffResponse> {
  const r = await as(developer, con.url, `/api/apps/${HR}/diff`);
  expect(r.status, r.text).toBe(200);
  return r.body as DiffResponse;
}
const changed = (d: DiffResponse) => d.objects.filter((o) => o.status !== 'unchanged');

/** Commits the HelmRelease's file (the estate's copy of sandbox/helm-charts.ts) and waits until Flux applied it. */
const commitRelease = (message: string, opts: ReleaseOptions): Promise<string> => helm.commit(message, opts);
const forceRetry = () => {
  const at = new Date().toISOString();
  return [`reconcile.fluxcd.io/forceAt=${at}`, `reconcile.fluxcd.io/requestedAt=${at}`];
};
/** kubectl (the sandbox admin) in the estate's namespace */
const kubectl = (args: string[]) => helm.kubectl(args);
const hrSpec = () =>
  JSON.parse(kubectl(['get', 'helmrelease', 'status-page', '-o', 'json'])).spec as {
    suspend?: boolean;
  };
const liveMessage = () => kubectl(['get', 'configmap', 'status-page', '-o', 'jsonpath={.data.MESSAGE}']).trim();
const bannerLive = () => kubectl(['get', 'configmap', BANNER, '--ignore-not-found', '-o', 'name']).trim() !== '';

async function installedAt(version: string): Promise<AppResponse> {
  let a: AppResponse | undefined;
  await waitFor(
    `status-page at chart ${version}, Ready`,
    async () => {
      a = await app();
      return a.app.source.revisionObserved === version && a.app.health === 'Healthy' && a.app.sync === 'Synced';
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );
  return a as AppResponse;
}

beforeAll(async () => {
  // the release at chart 0.1.0 in Git, applied by the estate's Kustomization (helm-controller installs it)
  helm = await helmEstate({ name: 'helmrelease', governed: true });
  HR = helm.app;
  NS = helm.estate.namespace;
  con = await startTestConsole(RECORDER_ON);
  developer = await signIn(con.url, 'developer');
  oncall = await signIn(con.url, 'oncall');
}, 300_000);
afterAll(async () => {
  try {
    await con?.close();
  } finally {
    // helm-controller uninstalls the release (what it may not delete in the governed namespace, the admin does)
    await helm?.teardown();
  }
}, 300_000);

describe('Flux HelmRelease on the real helm-controller', () => {
  it("is listed with its chart, health from helm-controller's conditions and the tree of its inventory", async () => {
    const a = await installedAt('0.1.0');
    expect(a.app).toMatchObject({ kind: 'HelmRelease', controller: 'flux', env: 'dev', cluster: 'nonprod' });
    // the chart: its name and pinned version, the HelmChart's artifact (the chart at that version, by digest)
    expect(a.app.source).toMatchObject({ kind: 'HelmRepository', name: 'sandbox-charts', path: 'status-page' });
    expect(a.app.source.ref).toBe('0.1.0');
    expect(a.app.source.revisionWanted).toBe('0.1.0');
    expect(a.app.source.artifactDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a.app.source.url).toMatch(/^oci:\/\/127\.0\.0\.1:\d+\/charts$/);
    const t = (await as(developer, con.url, `/api/apps/${HR}/tree`)).body as unknown as TreeResponse;
    const names = t.nodes.map((n) => `${n.ref.kind}/${n.ref.name}`);
    expect(names).toEqual(
      expect.arrayContaining(['Deployment/status-page', 'Service/status-page', 'ConfigMap/status-page']),
    );
    // the Deployment's own children: its ReplicaSet and the one Pod the valuesFrom ConfigMap asks for
    await waitFor('the Pod of status-page in the tree', async () => {
      const tt = (await as(developer, con.url, `/api/apps/${HR}/tree`)).body as unknown as TreeResponse;
      return tt.nodes.filter((n) => n.ref.kind === 'Pod' && n.ref.name.startsWith('status-page-')).length === 1;
    });
    // helm-controller applied them (Helm 4: server-side apply, its own field manager)
    const managers = JSON.parse(
      kubectl(['get', 'deployment', 'status-page', '-o', 'json', '--show-managed-fields']),
    ).metadata.managedFields.map((m: { manager: string }) => m.manager) as string[];
    expect(managers).toContain('helm-controller');
    // reconcile now: the release and the HelmChart helm-controller made for it (in the source's namespace)
    const rec = await as(developer, con.url, `/api/apps/${HR}/reconcile`, { method: 'POST' });
    expect(rec.status, rec.text).toBe(200);
    expect((rec.body as { objects: string[] }).objects).toEqual([
      `HelmRelease/${NS}/status-page`,
      `HelmChart/${helm.helmChart}`,
    ]);
  });

  it('diffs as helm-controller renders; a value changed in Git while suspended names helm-controller as the owner', async () => {
    let d = await diff();
    expect(d.state, d.error).not.toBe('unknown');
    expect(d.render?.renderer).toMatch(/^helm v3\.\d+\.\d+.*as helm-controller/);
    expect(d.render?.revision).toBe('0.1.0');
    // the values composed from the ConfigMap (replicas 1) and inline (the message): nothing differs at rest
    expect(changed(d).map((o) => `${o.ref.kind}/${o.ref.name}: ${o.changes.map((c) => c.path).join(',')}`)).toEqual([]);
    expect(d.objects.map((o) => o.ref.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Service']);

    // on-call freezes the release through the console: helm-controller is suspended (spec.suspend)
    const fr = await as(oncall, con.url, '/api/freezes', {
      method: 'POST',
      body: { cluster: 'nonprod', app: HR, reason: 'status page incident (helmrelease test)', minutes: 10 },
    });
    expect(fr.status, fr.text).toBe(200);
    const freezeId = (fr.body as { freeze: { id: string } }).freeze.id;
    expect(hrSpec().suspend).toBe(true);
    await commitRelease('status-page: a maintenance message (helmrelease test)', { message: 'Planned maintenance' });
    await waitFor(
      'the changed value in the diff',
      async () => {
        d = await diff();
        return changed(d).some((o) => o.ref.kind === 'ConfigMap' && o.ref.name === 'status-page');
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const cm = changed(d).find((o) => o.ref.kind === 'ConfigMap');
    const msg = cm?.changes.find((c) => c.path === 'data.MESSAGE');
    expect(msg).toMatchObject({ predicted: 'Planned maintenance', live: 'All systems operational' });
    expect(msg?.owners.map((o) => o.manager)).toContain('helm-controller');
    expect(liveMessage()).toBe('All systems operational');
    // the freeze ended: the release as it was (not suspended), helm-controller upgrades it, the diff is clean again
    const ended = await as(oncall, con.url, `/api/freezes/${freezeId}/end`, {
      method: 'POST',
      body: { decisions: [] },
    });
    expect(ended.status, ended.text).toBe(200);
    expect(hrSpec().suspend).not.toBe(true);
    await waitFor('helm-controller applied the message', async () => liveMessage() === 'Planned maintenance', {
      timeoutMs: 120_000,
      intervalMs: 1000,
    });
    await waitFor('the diff clean again', async () => changed(await diff()).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
  }, 300_000);

  it('a chart upgrade is recorded with its digest; the downgrade that removes an object is held by the prune policy', async () => {
    await commitRelease('status-page: chart 0.2.0 (helmrelease test)', {
      version: '0.2.0',
      message: 'Planned maintenance',
    });
    await installedAt('0.2.0');
    expect(bannerLive()).toBe(true);
    // evidence: the revision helm-controller observed, with the chart's digest
    await waitFor('app.revision-observed 0.2.0', async () => {
      const r = await as(
        con.admin,
        con.url,
        `/api/evidence?type=app.revision-observed&app=${encodeURIComponent(HR)}&limit=100`,
      );
      const ev = (r.body as { events: EvidenceEvent[] }).events.find((e) => e.data.revision === '0.2.0');
      if (!ev) return false;
      expect({ actor: ev.actor, digest: ev.data.artifactDigest }).toMatchObject({
        actor: 'helm-controller',
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      return true;
    });

    // helm-controller's own token may not delete the banner in a governed namespace without an approved preview
    expect(() =>
      kubectlAs('nonprod', 'helm-controller', ['-n', NS, 'delete', 'configmap', BANNER, '--dry-run=server']),
    ).toThrow(DENIED);

    // back to 0.1.0: helm-controller's upgrade would delete the banner; the admission policy denies it and the
    // release fails with the reason (the banner stays)
    await commitRelease('status-page: back to chart 0.1.0 (helmrelease test)', { message: 'Planned maintenance' });
    await waitFor(
      'the upgrade held by the policy',
      async () => {
        const hr = JSON.parse(kubectl(['get', 'helmrelease', 'status-page', '-o', 'json'])) as {
          status?: { conditions?: Array<{ type: string; status: string; message?: string }> };
        };
        const ready = hr.status?.conditions?.find((c) => c.type === 'Ready');
        return ready?.status === 'False' && DENIED.test(ready.message ?? '');
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(bannerLive()).toBe(true);
    expect((await app()).app.health).not.toBe('Healthy');
    // the operator removes it (admin, the sandbox's own set-up) and forces a retry: the release is back at 0.1.0
    kubectl(['delete', 'configmap', BANNER]);
    kubectl(['annotate', '--overwrite', 'helmrelease', 'status-page', ...forceRetry()]);
    await installedAt('0.1.0');
  }, 480_000);
});
