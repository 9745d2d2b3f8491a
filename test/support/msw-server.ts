// One msw server per SPA test file, set up as each of them needs it: listening for the whole file, an unhandled
// request an error (a test never reaches a real network by accident), the handlers (and the DOM, when the file
// renders) reset after each test. msw stands in for the BFF in UI tests only, never as proof that the BFF works.
import { setupServer, type SetupServerApi } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';

export function mswServer(opts: { cleanup?: () => void } = {}): SetupServerApi {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => {
    opts.cleanup?.();
    server.resetHandlers();
  });
  afterAll(() => server.close());
  return server;
}
