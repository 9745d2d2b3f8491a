// The route contract (issue 41): every route the BFF registers, with the zod schemas it parses (path params,
// query, body) and the one it validates its answer with, its access rule and a one-line summary. The OpenAPI
// document (document.ts, served at GET /api/openapi.json) and docs/reference/api.md (scripts/gen-api-docs.ts) are
// generated from this table; openapi.test.ts fails when a registered route is missing here, or an entry here
// names a route that is not registered, or the access rule here is not the one the route declares.
// Paths are in OpenAPI form (`{cluster}`); the catch-all `/api/*` (a JSON 404) is not an operation.
import { CORE_ROUTES } from './contract-core.ts';
import { GOVERNANCE_ROUTES } from './contract-governance.ts';
import type { RouteContract } from './contract-types.ts';

export { AREAS, type Area, type RawResponse, type RouteContract } from './contract-types.ts';

export const CONTRACT: RouteContract[] = [...CORE_ROUTES, ...GOVERNANCE_ROUTES];
