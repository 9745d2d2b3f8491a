// The freeze capability as the rest of the BFF sees it: what code outside src/server/freeze imports from it
// (freezeRoutes is registered by app.ts from routes.ts directly).
export { FreezeStore } from './store.ts';
