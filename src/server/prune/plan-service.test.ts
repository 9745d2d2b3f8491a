// Planning a prune: a failed render is unknown (nothing to approve), protected objects are listed and never
// deleted. Against the in-memory cluster of test-fixture.ts and a real SQLite evidence store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dev, ref, rev1, setup } from './test-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'prune-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PruneService plans', () => {
  it('a failed render is unknown: no candidates, nothing to approve', async () => {
    const t = setup(dir, { inGit: [], live: ['a'], render: () => Promise.reject(new Error('kustomize build failed')) });
    const { preview } = await t.service.create(t.app, dev);
    expect(preview).toMatchObject({ status: 'void', doc: { planState: 'unknown', candidates: [] } });
    expect(preview.doc.reasons[0]).toMatch(/kustomize build failed/);
  });

  it('protected objects are listed and never deleted', async () => {
    const t = setup(dir, {
      inGit: ['keep', 'c', 'd', 'e', 'f', 'g', 'h', 'i'],
      live: ['keep', 'a', 'c', 'd', 'e', 'f', 'g', 'h', 'i'],
    });
    t.cluster.add('p', { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' });
    t.app.inventory.push(ref('p'));
    const { preview } = await t.service.create(t.app, dev);
    expect(preview.doc.candidates.find((c) => c.ref.name === 'p')).toMatchObject({
      deletable: false,
      protectedBy: 'kustomize.toolkit.fluxcd.io/prune: disabled',
    });
    await t.service.decide(preview.id, rev1, { decision: 'approve', comment: 'ok' }, t.onDenied);
    await t.service.settled();
    expect(t.cluster.deletes.map((d) => d.name)).toEqual(['a']);
    expect(t.cluster.objects.has('p')).toBe(true);
  });

  it('a live Argo CD hook out of Git is no candidate (Argo CD never prunes hooks); under Flux the same object is', async () => {
    const plan = async (controller: 'argocd' | 'flux') => {
      const t = setup(dir, { inGit: ['keep'], live: ['keep', 'gone', 'migrate'] });
      t.cluster.add('migrate', { 'argocd.argoproj.io/hook': 'PreSync' });
      t.app.controller = controller;
      (t.deps.index as unknown as { get: (c: string, r: { name: string }) => unknown }).get = (_c, r) =>
        t.cluster.objects.get(r.name);
      const { preview } = await t.service.create(t.app, dev);
      return preview.doc.candidates.map((c) => c.ref.name).sort();
    };
    expect(await plan('argocd')).toEqual(['gone']);
    expect(await plan('flux')).toEqual(['gone', 'migrate']);
  });

  it("a labelled object in another environment's namespace is no candidate: the label alone does not make it the app's", async () => {
    const plan = async (mapped: boolean) => {
      const t = setup(dir, { inGit: ['keep'], live: ['keep', 'gone'] });
      const stray = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'stray', namespace: 'staging', uid: 'uid-stray', resourceVersion: '7' },
      };
      (t.deps.index as unknown as { trackedBy: () => unknown[] }).trackedBy = () => [stray];
      if (mapped) t.deps.envOfNamespace = (_c, ns) => (ns === 'staging' ? 'staging' : 'prod');
      const { preview } = await t.service.create(t.app, dev);
      return preview.doc.candidates.map((c) => `${c.ref.namespace}/${c.ref.name}`).sort();
    };
    expect(await plan(true)).toEqual(['prod/gone']);
    // with no mapping (labels decide environments) the label is all there is to go by
    expect(await plan(false)).toEqual(['prod/gone', 'staging/stray']);
  });
});
