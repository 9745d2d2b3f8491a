// Flux HelmReleases on the real helm-controller (issue 26, part 4): infra-dev's HelmRelease `status-page` installs
// a chart from the sandbox's OCI registry (pushed with helm at first start), values inline and from a ConfigMap.
// The console lists it with its tree (helm-controller's inventory), renders it as helm-controller does (helm
// template with the composed values) and diffs it; a value changed in Git while the release is suspended shows
// with helm-controller as the field owner; a chart downgrade that removes an object goes through a prune preview a
// reviewer approves, and helm-controller's own delete is denied by the admission policy without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppResponse, DiffResponse, TreeResponse } from '../../src/api/schemas.ts';
import type { EvidenceEvent } from '../../src/domain/evidence.ts';
import { helmReleaseFiles } from '../../sandbox/helm-charts.ts';
import { kubectlAs } from '../../sandbox/identities.ts';
import { waitFor } from '../../sandbox/procs.ts';
import { commitAndPushRetrying, waitForKustomizationRevision, writeRepoFile } from '../../sandbox/scenario.ts';
import { kubectl } from '../../sandbox/state.ts';
import { as, signIn, type Signed } from '../support/auth.ts';
import { startTestConsole } from '../support/console.ts';

const HR = 'nonprod/dev/helmrelease/status-page';
const INFRA = 'infra-dev';
/** the object chart 0.2.0 adds (sandbox/helm-charts.ts) */
const BANNER = 'status-page-banner';
const DENIED = /needs an approved prune preview in the GitOps console/;

let con: Awaited<ReturnType<typeof startTestConsole>>;
let developer: Signed;
let reviewer: Signed;
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

/** Commits the HelmRelease's file (sandbox/helm-charts.ts) and waits until infra-dev applied it. */
async function commitRelease(message: string, opts: Parameters<typeof helmReleaseFiles>[0]): Promise<string> {
  const sha = commitAndPushRetrying(message, (w) => {
    for (const [f, text] of Object.entries(helmReleaseFiles(opts))) writeRepoFile(w, f, text);
  });
  await waitForKustomizationRevision('nonprod', INFRA, sha, 120_000);
  return sha;
}
/** What `flux suspend|resume helmrelease` does. */
const setSuspended = (suspend: boolean) =>
  kubectl('nonprod', [
    ...['-n', 'dev', 'patch', 'helmrelease', 'status-page', '--type', 'merge'],
    ...['--field-manager', 'flux-client-side-apply', '-p', JSON.stringify({ spec: { suspend } })],
  ]);
const hrSpec = () =>
  JSON.parse(kubectl('nonprod', ['-n', 'dev', 'get', 'helmrelease', 'status-page', '-o', 'json'])).spec as {
    suspend?: boolean;
  };
const liveMessage = () =>
  kubectl('nonprod', ['-n', 'dev', 'get', 'configmap', 'status-page', '-o', 'jsonpath={.data.MESSAGE}']).trim();
const bannerLive = () =>
  kubectl('nonprod', ['-n', 'dev', 'get', 'configmap', BANNER, '--ignore-not-found', '-o', 'name']).trim() !== '';

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
  con = await startTestConsole();
  developer = await signIn(con.url, 'developer');
  reviewer = await signIn(con.url, 'reviewer');
  oncall = await signIn(con.url, 'oncall');
}, 120_000);
afterAll(async () => {
  try {
    setSuspended(false);
    await commitRelease('status-page back to the seed (helmrelease test)', {});
  } finally {
    await con?.close();
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
      kubectl('nonprod', ['-n', 'dev', 'get', 'deployment', 'status-page', '-o', 'json', '--show-managed-fields']),
    ).metadata.managedFields.map((m: { manager: string }) => m.manager) as string[];
    expect(managers).toContain('helm-controller');
    // reconcile now: the release and the HelmChart helm-controller made for it (in the source's namespace)
    const rec = await as(developer, con.url, `/api/apps/${HR}/reconcile`, { method: 'POST' });
    expect(rec.status, rec.text).toBe(200);
    expect((rec.body as { objects: string[] }).objects).toEqual([
      'HelmRelease/dev/status-page',
      'HelmChart/flux-system/dev-status-page',
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

  it('a chart upgrade is recorded with its digest; the downgrade that removes an object needs an approved prune preview', async () => {
    await commitRelease('status-page: chart 0.2.0 (helmrelease test)', {
      version: '0.2.0',
      message: 'Planned maintenance',
    });
    const up = await installedAt('0.2.0');
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
      expect(ev).toMatchObject({
        actor: 'helm-controller',
        data: { previous: '0.1.0', artifactDigest: up.app.source.artifactDigest },
      });
      return true;
    });

    // helm-controller's own token may not delete the banner in a governed namespace without an approved preview
    expect(() =>
      kubectlAs('nonprod', 'helm-controller', ['-n', 'dev', 'delete', 'configmap', BANNER, '--dry-run=server']),
    ).toThrow(DENIED);

    // back to 0.1.0 while suspended: the banner is extraneous, the prune preview lists it
    setSuspended(true);
    await commitRelease('status-page: back to chart 0.1.0 (helmrelease test)', { message: 'Planned maintenance' });
    let d = await diff();
    await waitFor(
      'the banner extraneous',
      async () => {
        d = await diff();
        return (
          d.render?.revision === '0.1.0' &&
          d.objects.some((o) => o.ref.kind === 'ConfigMap' && o.ref.name === BANNER && o.status === 'extraneous')
        );
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    expect(d.prune).toMatchObject({ deletions: 1 });
    const r = await as(developer, con.url, `/api/apps/${HR}/prune-previews`, { method: 'POST' });
    expect(r.status, r.text).toBe(200);
    const preview = (
      r.body as {
        preview: {
          id: string;
          plan: string;
          deletedBy?: string;
          candidates: Array<{ ref: { kind: string; name: string } }>;
        };
      }
    ).preview;
    expect(preview.candidates.map((c) => `${c.ref.kind}/${c.ref.name}`)).toEqual([`ConfigMap/${BANNER}`]);
    expect(preview.deletedBy).toBe('controller');
    // the requester may not approve their own; a reviewer does
    const self = await as(developer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'mine' },
    });
    expect(self.status).toBe(403);
    const ok = await as(reviewer, con.url, `/api/prune-previews/${preview.id}/approve`, {
      method: 'POST',
      body: { comment: 'chart 0.1.0 has no banner' },
    });
    expect(ok.status, ok.text).toBe(200);
    await waitFor(
      'the preview done: stamped for helm-controller',
      async () => {
        const p = (await as(con.admin, con.url, `/api/prune-previews/${preview.id}`)).body as {
          preview: { status: string; statusReason: string | null };
        };
        if (p.preview.status === 'failed') throw new Error(p.preview.statusReason ?? 'failed');
        return (
          p.preview.status === 'done' && /helm-controller's next prune deletes it/.test(p.preview.statusReason ?? '')
        );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // resumed: helm-controller's upgrade to 0.1.0 deletes the banner (the policy lets it now)
    setSuspended(false);
    await installedAt('0.1.0');
    await waitFor('the banner deleted by helm-controller', async () => !bannerLive(), { timeoutMs: 60_000 });
  }, 480_000);
});
