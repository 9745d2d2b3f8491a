// The prune capability as the rest of the BFF sees it: the store of previews and journals (metrics counts it).
// Routes are imported by app.ts directly, never from here.
export { PruneStore } from './store.ts';
export { voidPendingPreview } from './void-preview.ts';
