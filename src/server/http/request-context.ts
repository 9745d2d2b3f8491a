// A request id on every log line of a request: Fastify's request logger binds it, and lines written through
// the app's own logger while a request's work runs (services log through it) get it from here.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

const requestContext = new AsyncLocalStorage<string>();

/** Runs the rest of each request (hooks, handler, what it awaits) with its id in context. */
export function installRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', (req, _rep, done) => requestContext.run(req.id, done));
}

/** pino `mixin`: the running request's id, unless the logger already binds one (a request's own logger). */
export function requestIdMixin(
  _obj: object,
  _level: number,
  logger: { bindings(): Record<string, unknown> },
): Record<string, string> {
  const id = requestContext.getStore();
  return id && logger.bindings().reqId === undefined ? { reqId: id } : {};
}
