// One fetch wrapper: parses responses with the API schemas, throws ApiError.
import type { z } from 'zod';
import { ErrorBody } from '../../api/schemas.ts';

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

export async function apiGet<T extends z.ZodType>(
  path: string,
  schema: T,
  opts: RequestOptions = {},
): Promise<z.output<T>> {
  return apiRequest('GET', path, schema, undefined, opts);
}

export async function apiSend<T extends z.ZodType>(
  method: 'POST' | 'PUT' | 'DELETE',
  path: string,
  schema: T,
  body?: unknown,
  opts: RequestOptions = {},
): Promise<z.output<T>> {
  return apiRequest(method, path, schema, body, opts);
}

async function apiRequest<T extends z.ZodType>(
  method: string,
  path: string,
  schema: T,
  body: unknown,
  { signal, on401 = 'sign-in' }: RequestOptions,
): Promise<z.output<T>> {
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
    const err = ErrorBody.safeParse(parsed);
    if (err.success) {
      const e = err.data.error;
      throw new ApiError(res.status, e.code, e.message, e.cluster, e.requestId);
    }
    throw new ApiError(res.status, 'HttpError', `request failed (${res.status})`);
  }
  return schema.parse(parsed);
}

/** No retries for client errors that retrying cannot fix. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError && [400, 401, 403, 404, 409].includes(error.status)) return false;
  return failureCount < 3;
}
