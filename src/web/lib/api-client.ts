// One fetch wrapper: parses responses with the API schemas, throws ApiError.
import type { z } from 'zod';
import { ErrorBody } from '../../api/schemas.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly cluster?: string,
  ) {
    super(message);
  }
}

export async function apiGet<T extends z.ZodType>(path: string, schema: T, signal?: AbortSignal): Promise<z.output<T>> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin', signal });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Network', 'the console server is not reachable');
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    throw new ApiError(res.status, 'BadResponse', `unexpected response (${res.status})`);
  }
  if (!res.ok) {
    const err = ErrorBody.safeParse(body);
    if (err.success)
      throw new ApiError(res.status, err.data.error.code, err.data.error.message, err.data.error.cluster);
    throw new ApiError(res.status, 'HttpError', `request failed (${res.status})`);
  }
  return schema.parse(body);
}

/** No retries for client errors that retrying cannot fix. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError && [400, 401, 403, 404, 409].includes(error.status)) return false;
  return failureCount < 3;
}
