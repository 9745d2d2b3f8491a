// The evidence capability's public face: what other capabilities and the composition root (app.ts, main.ts)
// may use. Its routes are registered by app.ts directly and never exported here (that would make cycles).
export { EvidenceCheckpoints, checkpointIntervalMs } from './checkpoints.ts';
export { openEvidenceStore } from './open-store.ts';
export { EvidenceRecorder } from './recorder.ts';
export { OpenIntents } from './open-intents.ts';
export { faultPoint } from './fault-points.ts';
export { loadSigningKey, signingKeyPath, type Checkpoint } from './signing.ts';
export { type EvidenceQuery, type EvidenceStore } from './store.ts';
export { readCapped } from './read-capped.ts';
export {
  describeResult,
  ExportVerifier,
  parseCheckpoints,
  TRAILERS_SINCE,
  verifyExportStream,
  type OfflineOptions,
} from './offline-verify.ts';
export { describeBundle, verifyManifestBundle } from './manifest-bundle.ts';
