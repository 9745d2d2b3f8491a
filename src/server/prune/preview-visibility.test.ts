// A prune preview as one reader may see it (impersonation mode): hidden candidates, cascades and journal rows
// left out and counted, and no approval by a reader who cannot see all of it.
import { describe, expect, it } from 'vitest';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import { mustSeeAllToApprove, previewSeenBy, type ReaderAccess } from './approvals.ts';
import type { PreviewCandidate, PreviewView } from './model.ts';

const r = (kind: string, name: string): ObjectRef => ({
  cluster: 'c1',
  group: kind === 'Deployment' ? 'apps' : '',
  version: 'v1',
  kind,
  namespace: 'dev',
  name,
});
const candidate = (ref: ObjectRef, cascades: ObjectRef[] = []): PreviewCandidate => ({
  ref,
  id: refId(ref),
  uid: `uid-${ref.name}`,
  resourceVersion: '1',
  protectedBy: null,
  cascades,
  finalizers: [],
  createdAt: null,
  lastWriter: 'kubectl',
  deletable: true,
});

/** A reader denied the kinds in `denied` (what AccessReviewer.split answers, with its sentence). */
const denying =
  (...denied: string[]): ReaderAccess =>
  async (items, refOf) => {
    const hidden = items.filter((i) => denied.includes(refOf(i).kind));
    return {
      visible: items.filter((i) => !denied.includes(refOf(i).kind)),
      hidden,
      message: hidden.length ? `${hidden.length} hidden: no get on ${denied.join(', ')}` : null,
    };
  };

const sa = r('ServiceAccount', 'sa');
const cm = r('ConfigMap', 'cm');
const child = r('ConfigMap', 'child');
const dep = r('Deployment', 'dep');
const rs = r('ReplicaSet', 'rs');

function view(): PreviewView {
  const candidates = [candidate(sa, [child]), candidate(cm), candidate(dep, [rs])];
  return {
    preview: {
      id: 'p1',
      app: 'c1/flux-system/kustomization/app',
      cluster: 'c1',
      env: 'dev',
      status: 'pending',
      statusReason: null,
      snapshotHash: 'h',
      requiredApprovals: 1,
      requester: { issuer: 'local', subject: 'remy', name: 'remy' },
      createdAt: '2026-01-01T00:00:00Z',
      expiresAt: '2099-01-01T00:00:00Z',
      decisions: [],
      doc: {
        controller: 'flux',
        revision: 'r1',
        renderHash: 'x',
        renderer: 'flux',
        planState: 'ready',
        reasons: [],
        limits: { maxDeletions: 20, maxFraction: 0.5 },
        candidates,
        propagationPolicy: 'Background',
        batchSize: 10,
        confirmation: null,
      },
    },
    journal: candidates.map((c, i) => ({
      position: i,
      batch: 0,
      object: c.id,
      state: 'planned',
      detail: null,
      updatedAt: '2026-01-01T00:00:00Z',
    })),
    viewer: { canApprove: true, reason: null },
  } as unknown as PreviewView;
}

describe('previewSeenBy', () => {
  it('a reader who may see everything gets the preview as it is', async () => {
    const v = view();
    expect(await previewSeenBy(v, denying())).toEqual({ view: v, hidden: null });
  });

  it('leaves out hidden candidates, hidden cascades and their journal rows; counts them; no approval', async () => {
    const { view: seen, hidden } = await previewSeenBy(view(), denying('ConfigMap'));
    expect(hidden).toBe('2 hidden: no get on ConfigMap');
    expect(seen.preview.doc.candidates.map((c) => [c.ref.name, c.cascades.map((x) => x.name)])).toEqual([
      ['sa', []],
      ['dep', ['rs']],
    ]);
    expect(seen.journal.map((j) => j.object)).toEqual([refId(sa), refId(dep)]);
    expect(seen.preview.doc.reasons).toEqual(['2 hidden: no get on ConfigMap']);
    expect(seen.viewer).toEqual({
      canApprove: false,
      reason: 'You cannot approve a prune you cannot fully see: 2 hidden: no get on ConfigMap',
    });
    expect(JSON.stringify(seen)).not.toMatch(/"(cm|child)"/);
  });

  it("what a hidden candidate's deletion takes with it goes too, counted apart", async () => {
    const { view: seen, hidden } = await previewSeenBy(view(), denying('Deployment'));
    expect(seen.preview.doc.candidates.map((c) => c.ref.name)).toEqual(['sa', 'cm']);
    expect(hidden).toBe('1 hidden: no get on Deployment; and 1 object their deletion takes with it');
    expect(JSON.stringify(seen)).not.toContain('"rs"');
  });

  it("keeps the reason a reader already could not approve for (the requester's own preview)", async () => {
    const v = view();
    v.viewer = { canApprove: false, reason: 'You requested this prune: a different person must approve it' };
    expect((await previewSeenBy(v, denying('ConfigMap'))).view.viewer).toEqual(v.viewer);
  });

  it('mustSeeAllToApprove: 403 recorded for a reader who cannot see all of it, nothing for one who can', async () => {
    const denials: string[] = [];
    await expect(
      mustSeeAllToApprove(view(), denying('ConfigMap'), (reason) => denials.push(reason)),
    ).rejects.toMatchObject({ status: 403, message: expect.stringContaining('cannot fully see: 2 hidden') });
    expect(denials).toEqual(['You cannot approve a prune you cannot fully see: 2 hidden: no get on ConfigMap']);
    await expect(mustSeeAllToApprove(view(), denying(), (reason) => denials.push(reason))).resolves.toBeUndefined();
    expect(denials).toHaveLength(1);
  });
});
