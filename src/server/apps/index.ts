// The apps capability's public face: what other capabilities and the composition root (app.ts, main.ts)
// may use. Its routes are registered by app.ts directly and never exported here (that would make cycles).
export { appOf } from './app-of.ts';
export { AppCatalog } from './catalog.ts';
export { imageAutomationFor } from './image-automation.ts';
export { syncWindowsReader } from './sync-windows.ts';
