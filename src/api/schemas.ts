// The HTTP contract between the BFF and the SPA: the BFF validates its responses with these schemas, the SPA
// parses what it receives with them. This is the ONE index the SPA, the BFF, mocks and tests import from: it
// only re-exports the per-capability files below (the shared pieces are in common.ts).
export * from './common.ts';
export * from './drift.ts';
export * from './apps.ts';
export * from './dependencies.ts';
export * from './image-automation.ts';
export * from './stream.ts';
export * from './tree.ts';
export * from './diff.ts';
export * from './prune.ts';
export * from './freeze.ts';
export * from './freeze-windows.ts';
export * from './releases.ts';
export * from './evidence.ts';
export * from './auth.ts';
export * from './health.ts';
export * from './manifests.ts';
