// Voiding a pending prune preview, one way for every caller (an approval that finds it expired or its snapshot
// changed, the sandbox reset): the row moves pending → void, and only the caller that moved it records
// `prune.voided`. No Fastify types here.
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { PreviewRow, PruneStore } from './store.ts';

/** True when this call voided it (false: someone else moved the preview first; nothing is recorded). */
export async function voidPendingPreview(
  d: { store: Pick<PruneStore<unknown>, 'transition'>; recorder: Pick<EvidenceRecorder, 'record'> },
  p: Pick<PreviewRow<unknown>, 'id' | 'app' | 'cluster' | 'env' | 'snapshotHash'>,
  reason: string,
  actor: string,
): Promise<boolean> {
  const now = new Date().toISOString();
  if (!(await d.store.transition(p.id, ['pending'], 'void', reason, now))) return false;
  await d.recorder.record({
    time: now,
    type: 'prune.voided',
    actor,
    app: p.app,
    cluster: p.cluster,
    env: p.env,
    data: { previewId: p.id, snapshotHash: p.snapshotHash, reason },
  });
  return true;
}
