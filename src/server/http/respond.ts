// The one way routes check what goes in and what comes out: the src/api zod schemas.
import type { z } from 'zod';
import { HttpError } from './errors.ts';

/** Validates a response body against its schema before sending (a contract bug becomes a 500, not bad data). */
export function validated<T extends z.ZodType>(schema: T, value: z.input<T>): z.output<T> {
  return schema.parse(value);
}

/** Parses a query string, body or params with its schema; a 400 names each bad field. */
export function parsed<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new HttpError(
      400,
      'BadRequest',
      r.error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; '),
    );
  return r.data;
}
