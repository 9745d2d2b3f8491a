// The approvals ConfigMap's lifecycle (approval-params.ts): what the sweep withdraws (the object pruned, the
// approval lapsed, the preview no longer executing or done, the object surviving a newer revision, a value the
// console did not write) and what it keeps (another console's preview, an object it cannot read); a render that
// has the object again; a voided preview; and the tenant identities it lists. Against the in-memory apiserver of
// approvals-fixture.ts and a real SQLite store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { decodeEntry, encodeEntry } from '../../domain/prune-approval.ts';
import { forgetRendered, sweepApprovals, syncControllerIdentities, withdrawApprovals } from './approval-params.ts';
import { dev, noDenial, rev1, setup } from './approvals-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = () => SqliteEvidenceStore.open(dir, `e-${Math.random().toString(36).slice(2)}.sqlite`);

const KEEP = ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
const STAMP = 'gitops-console.dev/prune-approved';

/** An executed controller prune of a and b: both listed, both noted. */
async function listed() {
  const t = setup(store(), { controller: 'flux', inGit: KEEP, live: [...KEEP, 'a', 'b'] });
  const { preview } = await t.service.create(t.app, dev);
  await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, noDenial);
  await t.service.settled();
  const uid = (n: string) => t.cluster.cm(n)?.metadata.uid ?? '';
  const ids = { a: uid('a'), b: uid('b') };
  expect(Object.keys(t.cluster.approvals() ?? {}).sort()).toEqual([ids.a, ids.b].sort());
  const p = await t.deps.store.get(preview.id);
  if (!p) throw new Error('no preview');
  return { ...t, p, ids };
}

const states = async (t: Awaited<ReturnType<typeof listed>>) =>
  (await t.deps.store.journal(t.p.id)).map((j) => [j.object.split('/').pop(), j.state]);

describe('the sweep', () => {
  it('withdraws the entry of an object the controller pruned, and keeps the others', async () => {
    const t = await listed();
    t.cluster.remove('a');
    expect(await sweepApprovals(t.ctx, ['nonprod'])).toEqual({ nonprod: [t.ids.a] });
    expect(Object.keys(t.cluster.approvals() ?? {})).toEqual([t.ids.b]);
    // nothing to correct: a was deleted by its approval
    expect(await states(t)).toEqual([
      ['a', 'stamped'],
      ['b', 'stamped'],
    ]);
    const withdrawn = (await t.ev.list({ limit: 500 })).find((e) => e.type === 'prune.stamp' && e.data.withdrawn);
    expect(withdrawn?.data).toMatchObject({ uid: t.ids.a, stillLive: false, reason: 'the object is gone (pruned)' });
  });

  it('withdraws a lapsed approval: the object stays, its note goes, its row says so', async () => {
    const t = await listed();
    const data = t.cluster.approvals() ?? {};
    const e = decodeEntry(data[t.ids.a] ?? '');
    if (!e) throw new Error('no entry');
    data[t.ids.a] = encodeEntry({ ...e, expires: new Date(Date.now() - 1000).toISOString() });
    expect(await sweepApprovals(t.ctx, ['nonprod'])).toEqual({ nonprod: [t.ids.a] });
    expect(Object.keys(t.cluster.approvals() ?? {})).toEqual([t.ids.b]);
    expect(t.cluster.cm('a')?.metadata.annotations[STAMP]).toBeUndefined();
    expect(t.cluster.cm('b')?.metadata.annotations[STAMP]).toBeDefined();
    expect(await states(t)).toEqual([
      ['a', 'not-deleted'],
      ['b', 'stamped'],
    ]);
  });

  it('withdraws every entry of a preview that is no longer executing or done', async () => {
    const t = await listed();
    await t.deps.store.transition(t.p.id, ['done'], 'failed', 'test', new Date().toISOString());
    expect((await sweepApprovals(t.ctx, ['nonprod'])).nonprod?.sort()).toEqual([t.ids.a, t.ids.b].sort());
    expect(t.cluster.approvals()).toEqual({});
  });

  it("withdraws an object that survived the controller's reconcile of a newer revision (back in the render)", async () => {
    const t = await listed();
    t.app.source.revisionObserved = 'main@sha1:2';
    await sweepApprovals(t.ctx, ['nonprod']);
    expect(t.cluster.approvals()).toEqual({});
    const reasons = (await t.ev.list({ limit: 500 }))
      .filter((e) => e.type === 'prune.stamp' && e.data.withdrawn)
      .map((e) => e.data.reason);
    expect(reasons).toEqual([
      "the object survived the controller's reconcile of main@sha1:2: it is back in the render",
      "the object survived the controller's reconcile of main@sha1:2: it is back in the render",
    ]);
  });

  it("keeps another console's entry (until it lapses) and one whose object cannot be read; drops a foreign value", async () => {
    const t = await listed();
    const data = t.cluster.approvals() ?? {};
    const e = decodeEntry(data[t.ids.a] ?? '');
    if (!e) throw new Error('no entry');
    data[t.ids.a] = encodeEntry({ ...e, preview: '00000000-0000-4000-8000-000000000000' });
    data['uid-garbage'] = 'approved';
    t.cluster.failing.add('/api/v1/namespaces/dev/configmaps/b');
    expect(await sweepApprovals(t.ctx, ['nonprod'])).toEqual({ nonprod: ['uid-garbage'] });
    expect(Object.keys(t.cluster.approvals() ?? {}).sort()).toEqual([t.ids.a, t.ids.b].sort());
  });
});

describe('withdrawals outside the sweep', () => {
  it('forgetRendered: an object in a render again loses its approval', async () => {
    const t = await listed();
    const n = await forgetRendered(t.ctx, 'nonprod', [{ group: '', kind: 'ConfigMap', namespace: 'dev', name: 'b' }]);
    expect(n).toBe(1);
    expect(Object.keys(t.cluster.approvals() ?? {})).toEqual([t.ids.a]);
    expect(await states(t)).toEqual([
      ['a', 'stamped'],
      ['b', 'not-deleted'],
    ]);
  });

  it("withdrawApprovals: a voided preview's entries go, another preview's stay", async () => {
    const t = await listed();
    const data = t.cluster.approvals() ?? {};
    const e = decodeEntry(data[t.ids.b] ?? '');
    if (!e) throw new Error('no entry');
    data[t.ids.b] = encodeEntry({ ...e, preview: 'another' });
    expect(await withdrawApprovals(t.ctx, t.p, 'voided')).toBe(1);
    expect(Object.keys(t.cluster.approvals() ?? {})).toEqual([t.ids.b]);
  });
});

describe('tenant identities', () => {
  it('lists the tenant namespaces: governed or labelled, holding Flux objects, of Argo CD projects; drops gone ones; a failed read changes nothing', async () => {
    const t = setup(store(), { controller: 'flux', inGit: [], live: [] });
    const ks = (ns: string, name: string, sa?: string) => ({
      metadata: { name, namespace: ns, uid: name, resourceVersion: '1', annotations: {}, labels: {} },
      spec: sa ? { serviceAccountName: sa } : {},
    });
    t.cluster.lists.set('/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations', [
      ks('dev', 'tenant', 'dev-team'),
      ks('flux-system', 'infra', 'kustomize-controller'),
      ks('dev', 'plain'),
    ]);
    t.cluster.lists.set('/apis/helm.toolkit.fluxcd.io/v2/helmreleases', [ks('staging', 'chart', 'staging-team')]);
    t.cluster.lists.set('/apis/argoproj.io/v1alpha1/appprojects', [
      {
        metadata: { name: 'team', uid: 'p', resourceVersion: '1', annotations: {}, labels: {} },
        spec: {
          destinationServiceAccounts: [
            { server: '*', namespace: 'guest-*', defaultServiceAccount: 'deployer' },
            { server: '*', namespace: 'ops', defaultServiceAccount: 'ops:syncer' },
          ],
        },
      },
    ]);
    t.cluster.lists.set('/apis/argoproj.io/v1alpha1/applications', [
      {
        metadata: { name: 'guest-app', uid: 'a', resourceVersion: '1', annotations: {}, labels: {} },
        spec: { project: 'team', destination: { server: 'https://kubernetes.default.svc', namespace: 'guest-1' } },
      },
    ]);
    // a governed namespace, and one a platform admin labelled for a tenant not onboarded yet
    t.cluster.lists.set('/api/v1/namespaces', [
      { metadata: { name: 'prod', labels: { 'gitops-console.dev/governed': 'true' } } },
      { metadata: { name: 'team-b', labels: { 'gitops-console.dev/tenant': 'true' } } },
      { metadata: { name: 'default', labels: {} } },
    ] as never);
    const conn = t.cluster.conn();
    const first = await syncControllerIdentities(conn);
    expect(first.added.sort()).toEqual(['ns.dev', 'ns.guest-1', 'ns.ops', 'ns.prod', 'ns.staging', 'ns.team-b']);
    expect(first.removed).toEqual([]);
    expect(t.cluster.approvals()?.['ns.dev']).toBe('Kustomization dev/tenant spec.serviceAccountName dev-team');
    // a second run changes nothing
    const before = t.cluster.patches.length;
    expect(await syncControllerIdentities(conn)).toEqual({ added: [], removed: [] });
    expect(t.cluster.patches.length).toBe(before);
    // an unreadable kind: unknown, so nothing is dropped
    t.cluster.failing.add('/apis/argoproj.io/v1alpha1/appprojects');
    t.cluster.lists.delete('/apis/argoproj.io/v1alpha1/appprojects');
    await expect(syncControllerIdentities(conn)).rejects.toThrow(/500/);
    expect(Object.keys(t.cluster.approvals() ?? {})).toHaveLength(6);
    // the API not served (404): none of that kind
    t.cluster.failing.clear();
    expect(await syncControllerIdentities(conn)).toEqual({
      added: [],
      removed: ['ns.guest-1', 'ns.ops'],
    });
  });
});
