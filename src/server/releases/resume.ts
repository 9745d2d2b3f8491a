// After a restart each app's latest release is read back from the store first: recorded states are not recorded
// again. An app whose revision moved since its last recorded release gets a `release.gap` record: the console was
// not recording in between (releases in that window are not in the chain, and it says so).
import type { App } from '../../domain/app.ts';
import type { EvidenceEvent, EvidenceType } from '../../domain/evidence.ts';
import { RELEASE_EVIDENCE_TYPES, RELEASE_GAP, stateOfType } from '../../domain/release.ts';
import type { ReleaseRecorderOptions } from './recorder-options.ts';
import { releaseSha, type Tracked } from './tracking.ts';

/** The app's latest release records, read back once (resume after a restart without duplicates). */
export function readLatestRelease(o: ReleaseRecorderOptions, app: App): Promise<EvidenceEvent[]> {
  // the states, without the periodic verifications (one per interval would push them out of any window)
  return o.store.list({
    app: app.id,
    type: RELEASE_EVIDENCE_TYPES.filter((t) => t !== 'release.verification'),
    limit: 200,
  });
}

/** The release to follow from the records read back (undefined: none recorded); records the gap, if any. */
export function resumeFrom(o: ReleaseRecorderOptions, app: App, events: EvidenceEvent[]): Tracked | undefined {
  // a promotion is recorded on an older release when the next environment catches up: not this app's newest
  const newest = events.find((e) => e.type !== RELEASE_GAP && e.type !== 'release.promotion');
  const sha = typeof newest?.data.sha === 'string' ? newest.data.sha : undefined;
  if (!sha) return undefined;
  const cur = releaseSha(app);
  // the revision moved while this console was not recording: say so in the chain, once per restart
  if (cur && cur.sha !== sha && newest)
    o.recorder.observe({
      time: new Date().toISOString(),
      type: RELEASE_GAP as EvidenceType,
      actor: 'console',
      app: app.id,
      cluster: app.cluster,
      env: app.env,
      data: {
        from: newest.time,
        to: new Date().toISOString(),
        lastRecordedSha: sha,
        currentSha: cur.sha,
        reason:
          'the console was not recording between these times: the releases in between, if any, are not in the chain',
      },
    });
  const t: Tracked = { sha, revision: String(newest?.data.revision ?? sha), seenAt: Date.now(), recorded: new Map() };
  for (const e of [...events].reverse()) {
    if (e.data.sha !== sha) continue;
    const name = stateOfType(e.type);
    if (!name) continue;
    t.recorded.set(name, {
      status: String(e.data.status ?? 'ok'),
      reason: typeof e.data.reason === 'string' ? e.data.reason : undefined,
      time: e.time,
    });
    if (name === 'change' && typeof e.data.commitTime === 'string') t.commitTime = e.data.commitTime;
    if (name === 'change' && Array.isArray(e.data.parents))
      t.commit = { parents: e.data.parents.map(String), message: String(e.data.message ?? '') };
    if (name === 'reconcile' && e.data.status === 'ok') t.reconciledAt = Date.parse(e.time);
    if (name === 'health') t.healthAt = Date.parse(e.time);
    // a failed render's artifact lists no images: unknown, not none (the verification cannot judge digests)
    if (name === 'artifact' && Array.isArray(e.data.images) && e.data.imagesUnknown === undefined)
      t.images = e.data.images as Tracked['images'];
    if (name === 'render' && e.data.effect === 'unchanged' && typeof e.data.sameAs === 'string')
      t.unchangedFrom = e.data.sameAs;
  }
  return t;
}
