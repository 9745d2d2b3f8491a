// A freeze's live changes as one reader may see them (impersonation mode): changes of objects they may not get
// left out (Git and live values), their app listed among the unknown with the count, and no write-back of them.
import { describe, expect, it } from 'vitest';
import { refId, type ObjectRef } from '../../domain/refs.ts';
import { changesSeenBy, hiddenWriteBack, type ReaderAccess } from './read.ts';
import type { AppChange } from './types.ts';

const r = (kind: string, name: string): ObjectRef => ({
  cluster: 'c1',
  group: kind === 'Deployment' ? 'apps' : '',
  version: 'v1',
  kind,
  namespace: 'dev',
  name,
});
const change = (appId: string, ref: ObjectRef, path: string, git: unknown, live: unknown): AppChange => ({
  id: `${refId(ref)}#${path}`,
  appId,
  ref,
  path,
  git,
  live,
  manager: 'kubectl-edit',
  operation: 'Update',
  time: '2026-01-01T00:00:00Z',
});
const denying =
  (...denied: string[]): ReaderAccess =>
  async (items, refOf) => {
    const hidden = items.filter((i) => denied.includes(refOf(i).kind));
    return {
      visible: items.filter((i) => !denied.includes(refOf(i).kind)),
      hidden,
      message: hidden.length ? `${hidden.length} object${hidden.length === 1 ? '' : 's'} hidden` : null,
    };
  };

const A = 'c1/flux-system/kustomization/a';
const B = 'c1/flux-system/kustomization/b';
const all = {
  changes: [
    change(A, r('ConfigMap', 'cfg'), 'data.codec', 'h264', 'av1'),
    change(A, r('ConfigMap', 'cfg'), 'data.max', '8', '16'),
    change(A, r('Deployment', 'web'), 'spec.replicas', 1, 3),
    change(B, r('ConfigMap', 'other'), 'data.x', 'g', 'l'),
  ],
  unknown: [{ appId: 'c1/flux-system/kustomization/c', reason: 'the diff failed' }],
};

describe("a freeze's changes as one reader sees them", () => {
  it('everything for a reader who may get every object', async () => {
    const seen = await changesSeenBy(all, denying());
    expect(seen.changes).toEqual(all.changes);
    expect(seen.unknown).toEqual(all.unknown);
    expect(seen.hidden.size).toBe(0);
  });

  it('objects the reader may not get: their changes left out, counted per app among the unknown', async () => {
    const seen = await changesSeenBy(all, denying('ConfigMap'));
    expect(seen.changes.map((c) => c.path)).toEqual(['spec.replicas']);
    expect(JSON.stringify(seen.changes)).not.toMatch(/h264|av1|"16"|cfg|other/);
    expect(seen.unknown).toEqual([
      ...all.unknown,
      { appId: A, reason: '1 object hidden' },
      { appId: B, reason: '1 object hidden' },
    ]);
    expect([...seen.hidden].sort()).toEqual([all.changes[0]?.id, all.changes[1]?.id, all.changes[3]?.id].sort());
  });

  it('a write-back naming a hidden change is refused with the reason; one naming visible changes is not', async () => {
    const hidden = all.changes[0] as AppChange;
    const visible = all.changes[2] as AppChange;
    expect(
      await hiddenWriteBack(all, denying('ConfigMap'), [
        { change: visible.id, action: 'write-back' },
        { change: hidden.id, action: 'write-back' },
      ]),
    ).toEqual({
      appId: A,
      reason: 'You cannot write back a live change you cannot see (1 of your decisions): 1 object hidden',
    });
    expect(
      await hiddenWriteBack(all, denying('ConfigMap'), [
        { change: visible.id, action: 'write-back' },
        { change: hidden.id, action: 'git-wins' },
      ]),
    ).toBeUndefined();
  });
});
