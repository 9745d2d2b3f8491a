// The response parsers (parsers.ts: zod and the API schemas, ~36 KB brotli) as a chunk of their own. The shell
// passes `lazy('Name')` where it would pass a schema: apiGet starts loading the chunk beside its request, so the
// first answer waits for whichever of the two comes last, and the sign-in page never waits for it.
import type * as P from './parsers.ts';

export type Parsers = typeof P;
let loading: Promise<Parsers> | undefined;

/** The parsers module (one load; a failed load is tried again by the next caller). */
export function parsers(): Promise<Parsers> {
  loading ??= import('./parsers.ts').catch((e: unknown) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

/** A schema of parsers.ts, by name, loaded when a request first needs it. */
export function lazy<K extends keyof Parsers>(name: K): () => Promise<Parsers[K]> {
  return async () => (await parsers())[name];
}
