// The OpenAPI contract (issue 41). The route list is the app's own: buildApp's guard records every route it
// registers with its access rule (deps.routes), as in production; every one must be in the contract (contract.ts)
// with the same rule, and every contract entry must be a registered route. The document must be valid OpenAPI 3.1
// (@seriousme/openapi-schema-validator) whose schemas are valid JSON Schema 2020-12 with every $ref resolving
// (Ajv), and GET /api/openapi.json must answer it. Unit tier: the app is built with stand-ins for its services (no
// cluster, no sandbox); only registration and one public route run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildApp } from '../app.ts';
import type { AccessRule } from '../auth/index.ts';
import { SessionStore } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { EvidenceRecorder } from '../evidence/index.ts';
import { SqliteEvidenceStore } from '../evidence/sqlite-store.ts';
import { ClusterManager } from '../kube/cluster-manager.ts';
import { CONTRACT, type RouteContract } from './contract.ts';
import { accessInWords, buildOpenApi, openApiPath } from './document.ts';

type Registered = { method: string; url: string; access: AccessRule };

/** Routes that are no operation: the catch-all 404 of unknown API paths, and the HEAD twin of every GET. */
const notOperations = (r: Registered) => r.url === '/api/*' || r.method === 'HEAD';

/** What is wrong between the registered routes and a contract, one line each (empty: they agree). */
export function contractProblems(routes: Registered[], contract: RouteContract[]): string[] {
  const key = (method: string, path: string) => `${method} ${path}`;
  const byKey = new Map(contract.map((c) => [key(c.method, c.path), c]));
  const registered = new Set<string>();
  const problems: string[] = [];
  for (const r of routes.filter((x) => !notOperations(x))) {
    const k = key(r.method, openApiPath(r.url));
    registered.add(k);
    const c = byKey.get(k);
    if (!c) problems.push(`${k}: registered, but not in the contract (src/server/openapi/contract.ts)`);
    else if (JSON.stringify(c.access) !== JSON.stringify(r.access))
      problems.push(`${k}: the contract says ${JSON.stringify(c.access)}, the route ${JSON.stringify(r.access)}`);
  }
  for (const k of byKey.keys()) if (!registered.has(k)) problems.push(`${k}: in the contract, but no such route`);
  return problems;
}

let dir: string;
let app: FastifyInstance;
let store: SqliteEvidenceStore;
const routes: Registered[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  store = SqliteEvidenceStore.open(dir);
  const silent = { warn: () => undefined, error: () => undefined };
  // stand-ins: registration only reads that these exist (and subscribes to the catalog)
  const catalog = {
    on: () => undefined,
    off: () => undefined,
    list: () => [],
    get: () => undefined,
    settleNow: () => undefined,
    version: () => '0',
  };
  const deps = {
    clusters: new ClusterManager(),
    catalog,
    // the prune routes need an object index, the "Try it" routes sandbox mode: all are registered here
    index: { sizes: () => new Map() },
    tryit: {},
    tryitService: { idle: async () => undefined },
    store,
    recorder: new EvidenceRecorder(store, silent),
    envOrder: [],
    accounts: {},
    sessions: new SessionStore(60_000, 3_600_000),
    loggerLevel: 'silent',
    defaultMetrics: false,
    routes,
  } as unknown as AppDeps;
  app = await buildApp(deps);
});

afterAll(async () => {
  await app?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the route contract', () => {
  it('names every registered route with its access rule, and nothing else', () => {
    expect(routes.length).toBeGreaterThan(50);
    expect(contractProblems(routes, CONTRACT)).toEqual([]);
  });

  it('reports a route missing from the contract, an entry with no route, and a different rule', () => {
    const rest = CONTRACT.filter((c) => !(c.method === 'GET' && c.path === '/api/freezes/{id}/changes'));
    expect(contractProblems(routes, rest)).toEqual([
      'GET /api/freezes/{id}/changes: registered, but not in the contract (src/server/openapi/contract.ts)',
    ]);
    const ghost: RouteContract = { ...(CONTRACT[0] as RouteContract), path: '/api/ghost' };
    expect(contractProblems(routes, [...CONTRACT, ghost])).toEqual([
      'GET /api/ghost: in the contract, but no such route',
    ]);
    const widened = CONTRACT.map((c) =>
      c.path === '/api/sinks' && c.method === 'GET' ? { ...c, access: { signedIn: true } as AccessRule } : c,
    );
    expect(contractProblems(routes, widened)).toEqual([
      'GET /api/sinks: the contract says {"signedIn":true}, the route {"action":"sinks.manage","scope":"everywhere"}',
    ]);
  });

  it('says who may call a route in words', () => {
    expect(accessInWords({ public: true })).toBe('public');
    expect(accessInWords({ action: 'sinks.manage', scope: 'everywhere' })).toBe(
      'admin (sinks.manage) on every cluster and environment',
    );
    expect(accessInWords({ action: 'freeze.toggle', scope: 'anywhere' })).toBe(
      'oncall or admin (freeze.toggle) somewhere (items are filtered by grant)',
    );
  });
});

describe('the OpenAPI document', () => {
  const doc = buildOpenApi();

  it('is valid OpenAPI 3.1', async () => {
    const res = await new Validator().validate(doc);
    expect(res.errors).toBeUndefined();
    expect(res.valid).toBe(true);
  });

  it('fails the validator when it is broken (the check can fail)', async () => {
    const broken = structuredClone(doc) as { paths: Record<string, { get: { responses: unknown } }> };
    (broken.paths['/api/apps'] as { get: { responses: unknown } }).get.responses = {};
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('has schemas that are JSON Schema 2020-12, every $ref resolving', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const schemas = (doc.components as { schemas: Record<string, object> }).schemas;
    ajv.addSchema({ $id: 'https://console.invalid/openapi.json', components: { schemas } });
    for (const name of Object.keys(schemas)) {
      expect(ajv.validateSchema(schemas[name] as object), `${name}: ${ajv.errorsText()}`).toBe(true);
      expect(() => ajv.getSchema(`https://console.invalid/openapi.json#/components/schemas/${name}`)).not.toThrow();
    }
    expect(ajv.validateSchema({ type: 'objekt' })).toBe(false);
  });

  it('lists every registered route as an operation', () => {
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    for (const r of routes.filter((x) => !notOperations(x)))
      expect(paths[openApiPath(r.url)]?.[r.method.toLowerCase()], `${r.method} ${r.url}`).toBeDefined();
  });

  it('refuses a response schema it cannot name, and a path parameter without a schema', () => {
    const base = CONTRACT.find((c) => c.path === '/api/freezes/{id}' && c.method === 'GET') as RouteContract;
    expect(() => buildOpenApi([{ ...base, params: undefined }])).toThrow(/path parameter \{id\} has no schema/);
    const anonymous = { ...base, response: z.object({ notExported: z.string() }) };
    expect(() => buildOpenApi([anonymous])).toThrow(/response schema is not an exported schema/);
  });

  it('is served at GET /api/openapi.json, without signing in', async () => {
    const res = await app.inject({ url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(doc);
  });
});
