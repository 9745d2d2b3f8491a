// Everything the SPA parses responses with: the API's zod schemas (and zod) plus the fast parsers of the two
// large lists. Loaded on demand (lazy-parsers.ts), never with the shell: the sign-in page and the layout paint
// without it, and the first request fetches it beside its own answer.
import { z } from 'zod';
import { AppsResponse, AppSummarySchema, TreeResponse, type AppSummary, type TreeNodeDto } from '../../api/schemas.ts';

export * from '../../api/schemas.ts';

// At 2,000 apps a full schema parse costs a few hundred milliseconds on a cold page (bench/scale.ts): the
// envelope and the first app are parsed with the schema (a contract change still fails loudly), every other
// app's essentials are checked by hand, as the tree does with its nodes.
const AppsEnvelope = AppsResponse.extend({ apps: z.array(z.unknown()) });
function parseApps(body: unknown): AppsResponse {
  const env = AppsEnvelope.parse(body);
  if (env.apps.length) AppSummarySchema.parse(env.apps[0]);
  for (const x of env.apps) {
    const a = x as Partial<AppSummary> | null;
    if (
      !a ||
      typeof a.id !== 'string' ||
      typeof a.name !== 'string' ||
      typeof a.cluster !== 'string' ||
      typeof a.env !== 'string' ||
      typeof a.namespace !== 'string' ||
      typeof a.health !== 'string' ||
      typeof a.sync !== 'string' ||
      typeof a.controller !== 'string' ||
      !a.source ||
      !a.automation
    )
      throw new Error('malformed app in the response');
  }
  return env as AppsResponse;
}
export const AppsFast = z.unknown().transform(parseApps);

// The tree can hold 20,000 nodes: parse the envelope and summary with the schema, and check each node's
// essentials by hand (zod per node would cost hundreds of milliseconds on the main thread).
const TreeEnvelope = TreeResponse.extend({ nodes: z.array(z.unknown()) });
function parseTree(body: unknown): TreeResponse {
  const env = TreeEnvelope.parse(body);
  for (const n of env.nodes) {
    const node = n as Partial<TreeNodeDto> | null;
    if (
      !node ||
      typeof node.id !== 'string' ||
      typeof node.depth !== 'number' ||
      !node.ref ||
      typeof node.health !== 'string'
    ) {
      throw new Error('malformed tree node in the response');
    }
  }
  return env as TreeResponse;
}
export const TreeFast = z.unknown().transform(parseTree);

/** `{ ok: boolean }` (sign-out) */
export const OkResponse = z.object({ ok: z.boolean() });
/** Any JSON: for answers the caller checks itself */
export const AnyJson = z.unknown();
