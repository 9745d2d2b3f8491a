// The diff capability's public face: what other capabilities and the composition root (app.ts, main.ts)
// may use. Its routes are registered by app.ts directly and never exported here (that would make cycles).
export { diffApp, type AppDiff } from './app-diff.ts';
export { familyOf } from './env-compare.ts';
export { Lru } from './lru.ts';
export { localIoError, RenderError, renderCanonical, type Obj, type RenderResult } from './render.ts';
export { DiffService, renderTools } from './service.ts';
