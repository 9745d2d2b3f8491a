// The releases capability as the rest of the BFF sees it: the release recorder main.ts starts (with its registry
// mirrors and the diff's dry-run as the validation state). The routes are imported by app.ts directly.
export { parseRegistryMirrors } from './record-artifact.ts';
export { validateRender } from './record-validation.ts';
export { ReleaseRecorder } from './recorder.ts';
export { ManifestExpired, ManifestStore, ManifestTampered } from '../store/manifest-store.ts';
export { applyManifestRetention, ManifestRetention } from './manifest-retention.ts';
