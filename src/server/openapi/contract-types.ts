// The route contract's types and the helpers its tables share (contract.ts).
import { z } from 'zod';
import { AppParams } from '../../api/schemas.ts';
import type { AccessRule } from '../auth/index.ts';

export const AREAS = [
  'Health',
  'Auth',
  'Apps',
  'Tree',
  'Diff',
  'Releases',
  'Prune',
  'Freezes',
  'Evidence',
  'Sinks',
  'Notifications',
  'Try it',
] as const;
export type Area = (typeof AREAS)[number];

/** A body that is not JSON (a stream, a download, a page, a redirect): its media type and what it holds. */
export interface RawResponse {
  contentType: string;
  description: string;
  /** the zod schema of each item (an event of a stream), when there is one */
  itemSchema?: z.ZodType;
}

export interface RouteContract {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI form: `/api/apps/{cluster}/{namespace}/{kind}/{name}` */
  path: string;
  area: Area;
  summary: string;
  /** the rule the route declares (the guard enforces it; the test compares it with the registered one) */
  access: AccessRule;
  /** what the handler checks beyond the rule, in words */
  accessNote?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** the schema the handler validates its answer with (`validated(Schema, …)`), or a non-JSON body */
  response: z.ZodType | RawResponse;
  /** default 200 */
  status?: 200 | 202 | 302;
  /** only registered in some modes (e.g. sandbox mode); the test registers them all */
  only?: string;
}

export const anywhere = (action: Extract<AccessRule, { action: unknown }>['action']): AccessRule => ({
  action,
  scope: 'anywhere',
});
export const onApp = (action: Extract<AccessRule, { action: unknown }>['action']): AccessRule => ({
  action,
  scope: 'app',
});
export const PUBLIC: AccessRule = { public: true };
export const SIGNED_IN: AccessRule = { signedIn: true };
export const BEFORE_PASSWORD_CHANGE: AccessRule = { signedIn: true, beforePasswordChange: true };

export const APP = '/api/apps/{cluster}/{namespace}/{kind}/{name}';
export const ClusterParams = z.object({ cluster: z.string().min(1).max(253) });
export const ShaParams = AppParams.extend({ sha: z.string().regex(/^[0-9a-f]{7,64}$/) });
export const OidcStartQuery = z.object({ next: z.string().optional() });
export const ndjson = 'application/x-ndjson; charset=utf-8';
