// One fetch wrapper: parses responses with the API schemas, throws ApiError. A schema may be given as a loader
// (lazy-parsers.ts): the shell does, so zod and the schemas are not part of it.
import type { z } from 'zod';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly cluster?: string,
    /** names the BFF's log lines of a failed request (sent with 5xx answers): what the user quotes */
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** The session's CSRF token, sent with every mutation (set when the session is read). */
let csrfToken: string | undefined;
export function setCsrfToken(t: string | undefined): void {
  csrfToken = t;
}

/** Where a 401 sends the browser: the sign-in page, coming back to the same page afterwards. */
export function signInPath(here = `${window.location.pathname}${window.location.search}`): string {
  return here.startsWith('/signin') ? here : `/signin?next=${encodeURIComponent(here)}`;
}
let onUnauthenticated: () => void = () => {
  if (!window.location.pathname.startsWith('/signin')) window.location.assign(signInPath());
};
export function setUnauthenticatedHandler(fn: () => void): void {
  onUnauthenticated = fn;
}
/** The session is gone: go to sign-in (the router's navigation once it exists). */
export function unauthenticated(): void {
  onUnauthenticated();
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /**
   * What a 401 answer does. 'sign-in' (default): the session is gone, go to sign-in, then throw.
   * 'throw': only throw; for the calls that ask about the session or create one (the session
   * query, sign-in, password change, sign-out), whose callers handle the 401 themselves.
   */
  on401?: 'sign-in' | 'throw';
}

/** A schema, or a loader of one (started beside the request, awaited after it) */
export type SchemaArg<T extends z.ZodType> = T | (() => Promise<T>);

/** The error envelope `{ error: { code, message, cluster?, requestId? } }`, checked by hand (no schema needed). */
function errorOf(body: unknown): { code: string; message: string; cluster?: string; requestId?: string } | undefined {
  const e = (body as { error?: unknown } | null | undefined)?.error as Record<string, unknown> | null | undefined;
  if (!e || typeof e !== 'object' || typeof e.code !== 'string' || typeof e.message !== 'string') return undefined;
  return {
    code: e.code,
    message: e.message,
    ...(typeof e.cluster === 'string' ? { cluster: e.cluster } : {}),
    ...(typeof e.requestId === 'string' ? { requestId: e.requestId } : {}),
  };
}

export async function apiGet<T extends z.ZodType>(
  path: string,
  schema: SchemaArg<T>,
  opts: RequestOptions = {},
): Promise<z.output<T>> {
  return apiRequest('GET', path, schema, undefined, opts);
}

export async function apiSend<T extends z.ZodType>(
  method: 'POST' | 'PUT' | 'DELETE',
  path: string,
  schema: SchemaArg<T>,
  body?: unknown,
  opts: RequestOptions = {},
): Promise<z.output<T>> {
  return apiRequest(method, path, schema, body, opts);
}

async function apiRequest<T extends z.ZodType>(
  method: string,
  path: string,
  schema: SchemaArg<T>,
  body: unknown,
  { signal, on401 = 'sign-in' }: RequestOptions,
): Promise<z.output<T>> {
  const loading = typeof schema === 'function' ? schema() : Promise.resolve(schema);
  // a failed load is reported when the answer needs it, not as an unhandled rejection meanwhile
  loading.catch(() => undefined);
  let res: Response;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') {
    headers['X-Console-Request'] = '1';
    if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
  }
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(signal ? { signal } : {}),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Network', 'the console server is not reachable');
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    throw new ApiError(res.status, 'BadResponse', `unexpected response (${res.status})`);
  }
  if (!res.ok) {
    // a lost session (expired, signed out elsewhere) goes to sign-in, unless the caller said it handles 401
    if (res.status === 401 && on401 === 'sign-in') onUnauthenticated();
    const e = errorOf(parsed);
    if (e) throw new ApiError(res.status, e.code, e.message, e.cluster, e.requestId);
    throw new ApiError(res.status, 'HttpError', `request failed (${res.status})`);
  }
  let s: T;
  try {
    s = await loading;
  } catch {
    throw new ApiError(0, 'Network', 'the console could not load its response parsers: reload the page');
  }
  return s.parse(parsed);
}

/** No retries for client errors that retrying cannot fix. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError && [400, 401, 403, 404, 409].includes(error.status)) return false;
  return failureCount < 3;
}
