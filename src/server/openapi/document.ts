// The OpenAPI 3.1 document of the BFF, built from the route contract (contract.ts).
//
// Generator: zod 4's own `z.toJSONSchema`, no new dependency. Its default target is JSON Schema 2020-12, which
// is OpenAPI 3.1's schema dialect, and it converts a registry of schemas into components that $ref each other
// (`uri` option), so shared shapes (an app, a cluster's state) are written once. @asteasolutions/zod-to-openapi
// would add a dependency and a second registry for the same result. Two adjustments make its output OpenAPI
// components: the per-schema `$schema` and `$id` are dropped (the document's `jsonSchemaDialect` says which dialect;
// an `$id` with a fragment is not allowed in 2020-12). Answers are converted as zod outputs (what the handler
// sends), parameters and bodies as zod inputs (what a client sends: before defaults and transforms).
import { z } from 'zod';
import * as api from '../../api/schemas.ts';
import * as notifications from '../../api/notifications.ts';
import * as sinks from '../../api/sinks.ts';
import * as tryit from '../../api/tryit.ts';
import { ACTIONS, rolesFor } from '../../domain/access.ts';
import type { AccessRule } from '../auth/index.ts';
import { CONTRACT, type RawResponse, type RouteContract } from './contract.ts';
import * as extra from './extra-schemas.ts';

type Json = Record<string, unknown>;

export const OPENAPI_VERSION = '3.1.0';
const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const REF = '#/components/schemas/';

/** Every exported zod schema of the API modules, by its export name (the component's name). */
function namedSchemas(): Map<z.ZodType, string> {
  const out = new Map<z.ZodType, string>();
  for (const mod of [api, notifications, sinks, tryit, extra])
    for (const [name, value] of Object.entries(mod))
      if (value instanceof z.ZodType && !out.has(value)) out.set(value, name);
  return out;
}

const isRaw = (r: RouteContract['response']): r is RawResponse => !(r instanceof z.ZodType);

/** The access rule in words: who may call the route. */
export function accessInWords(rule: AccessRule): string {
  if ('public' in rule) return 'public';
  if ('signedIn' in rule)
    return rule.beforePasswordChange ? 'signed in (also before the one-time password is changed)' : 'signed in';
  const roles = ACTIONS[rule.action].length === 1 ? 'admin' : `${rolesFor(rule.action)} or admin`;
  const where = {
    app: "on the app's cluster and environment",
    object: "on the object's cluster and environment",
    cluster: 'on the cluster',
    anywhere: 'somewhere (items are filtered by grant)',
    everywhere: 'on every cluster and environment',
  }[rule.scope];
  return `${roles} (${rule.action}) ${where}`;
}

/** `/api/apps/{cluster}` from Fastify's `/api/apps/:cluster` */
export const openApiPath = (fastifyUrl: string): string => fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function strip(schema: Json): Json {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

/** A request schema (params, query, body) as a client sends it, inline. */
function inputSchema(schema: z.ZodType, where: string): Json {
  const out = strip(z.toJSONSchema(schema, { io: 'input' }) as Json);
  if (JSON.stringify(out).includes('"#/')) throw new Error(`${where}: the schema refers to definitions of its own`);
  return out;
}

function parameters(r: RouteContract): Json[] {
  const where = `${r.method} ${r.path}`;
  const out: Json[] = [];
  const pathProps = r.params ? ((inputSchema(r.params, where).properties ?? {}) as Record<string, Json>) : {};
  const names = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  for (const name of names) {
    const schema = pathProps[name];
    if (!schema) throw new Error(`${where}: path parameter {${name}} has no schema`);
    out.push({ name, in: 'path', required: true, schema });
  }
  for (const extraName of Object.keys(pathProps))
    if (!names.includes(extraName)) throw new Error(`${where}: parameter ${extraName} is not in the path`);
  if (r.query) {
    const q = inputSchema(r.query, where);
    const required = new Set((q.required ?? []) as string[]);
    for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, Json>))
      out.push({ name, in: 'query', required: required.has(name), schema });
  }
  // a public route that changes something: the sign-in header (no cross-site form can send it)
  if ('public' in r.access && r.method !== 'GET')
    out.push({ name: 'X-Console-Request', in: 'header', required: true, schema: { type: 'string', const: '1' } });
  return out;
}

function security(r: RouteContract): Json[] {
  if ('public' in r.access) return [];
  return r.method === 'GET' ? [{ session: [] }] : [{ session: [], csrf: [] }];
}

const errorRef = { $ref: '#/components/responses/Error' };

function operation(r: RouteContract, names: Map<z.ZodType, string>): Json {
  const where = `${r.method} ${r.path}`;
  const status = String(r.status ?? 200);
  const ref = (schema: z.ZodType): Json => {
    const name = names.get(schema);
    if (!name)
      throw new Error(`${where}: the response schema is not an exported schema of src/api or extra-schemas.ts`);
    return { $ref: `${REF}${name}` };
  };
  let ok: Json;
  if (isRaw(r.response)) {
    const raw = r.response;
    ok = {
      description: raw.description,
      content: Object.fromEntries(
        raw.contentType.split(' | ').map((t) => [t, raw.itemSchema ? { schema: { type: 'string' } } : {}]),
      ),
      ...(raw.itemSchema ? { 'x-item-schema': ref(raw.itemSchema) } : {}),
    };
  } else ok = { description: 'OK', content: { 'application/json': { schema: ref(r.response) } } };
  const body = r.body ? inputSchema(r.body, where) : undefined;
  const params = parameters(r);
  return {
    operationId: `${r.method.toLowerCase()}${r.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: r.summary,
    tags: [r.area],
    description: `Access: ${accessInWords(r.access)}${r.accessNote ? `; ${r.accessNote}` : ''}.${r.only ? ` Only in ${r.only}.` : ''}`,
    'x-access': r.access,
    security: security(r),
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: { [status]: ok, default: errorRef },
  };
}

/** Components: every named schema an answer refers to (directly or inside another), as zod outputs. */
function components(ops: Json, names: Map<z.ZodType, string>): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  // only the schemas whose output JSON Schema can say (queries with transforms have none; they are inputs)
  for (const [schema, id] of names)
    try {
      z.toJSONSchema(schema, { io: 'output' });
      registry.add(schema, { id });
    } catch {
      // not representable as an answer: never one
    }
  const all = z.toJSONSchema(registry, { io: 'output', uri: (id) => `${REF}${id}` }).schemas as Record<string, Json>;
  // keep what the operations reach, following $refs
  const keep = new Set<string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string' && x.startsWith(REF)) {
          const id = x.slice(REF.length);
          if (!keep.has(id)) {
            keep.add(id);
            visit(all[id]);
          }
        } else visit(x);
      }
  };
  visit(ops);
  return Object.fromEntries(
    [...keep].sort().map((id) => {
      const s = all[id];
      if (!s) throw new Error(`no component ${id}`);
      return [id, strip(s)];
    }),
  );
}

/** The OpenAPI 3.1 document of `contract` (default: the BFF's). */
export function buildOpenApi(contract: RouteContract[] = CONTRACT, version = '0.1.0'): Json {
  const names = namedSchemas();
  const paths: Record<string, Json> = {};
  for (const r of contract) {
    const p = (paths[r.path] ??= {});
    const m = r.method.toLowerCase();
    if (p[m]) throw new Error(`${r.method} ${r.path} is in the contract twice`);
    p[m] = operation(r, names);
  }
  const errorBody = names.get(api.ErrorBody) as string;
  const schemas = components({ paths, error: { $ref: `${REF}${errorBody}` } }, names);
  return {
    openapi: OPENAPI_VERSION,
    jsonSchemaDialect: DIALECT,
    info: {
      title: 'GitOps governance console API',
      version,
      description:
        'The BFF of the GitOps governance console. Sign in (POST /api/auth/signin) for the session cookie; every ' +
        'non-GET request of a signed-in user sends the X-CSRF-Token header (the csrfToken of GET /api/auth/session). ' +
        'Errors answer {"error": {"code", "message"}}. Generated from the zod schemas (src/server/openapi).',
    },
    tags: [...new Set(contract.map((r) => r.area))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      responses: {
        Error: {
          description: 'An error: 400 bad input, 401 not signed in, 403 refused (recorded), 404, 409, 5xx',
          content: { 'application/json': { schema: { $ref: `${REF}${errorBody}` } } },
        },
      },
      securitySchemes: {
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'console_session',
          description: 'The session cookie (`__Host-console_session` over TLS) set by a sign-in',
        },
        csrf: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: "The session's csrfToken, on every non-GET request",
        },
      },
    },
  };
}
