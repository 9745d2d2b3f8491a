// @vitest-environment jsdom
// The fetch wrapper: a 401 goes to sign-in only when the request says so (never decided by its URL).
import { http, HttpResponse } from 'msw';
import { z } from 'zod';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { apiGet, apiSend, ApiError, setUnauthenticatedHandler } from './api-client.ts';
import { getSession } from './session.ts';
import { mswServer } from '../../../test/support/msw-server.ts';

const server = mswServer();

const toSignIn = vi.fn();
beforeEach(() => {
  toSignIn.mockReset();
  setUnauthenticatedHandler(toSignIn);
});

const unauthorized = () =>
  HttpResponse.json({ error: { code: 'Unauthenticated', message: 'sign in first' } }, { status: 401 });
const Ok = z.object({ ok: z.boolean() });

async function caught(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(e)}`);
  return e;
}

describe('apiRequest on 401', () => {
  it('goes to sign-in by default, whatever the path (an /api/auth/ path included), and throws', async () => {
    server.use(http.get('/api/apps', unauthorized), http.get('/api/auth/whatever', unauthorized));
    expect((await caught(apiGet('/api/apps', Ok))).status).toBe(401);
    expect((await caught(apiGet('/api/auth/whatever', Ok))).status).toBe(401);
    expect(toSignIn).toHaveBeenCalledTimes(2);
  });

  it("only throws with on401: 'throw', whatever the path", async () => {
    server.use(http.post('/api/apps/x/reconcile', unauthorized));
    const e = await caught(apiSend('POST', '/api/apps/x/reconcile', Ok, undefined, { on401: 'throw' }));
    expect(e).toMatchObject({ status: 401, code: 'Unauthenticated', message: 'sign in first' });
    expect(toSignIn).not.toHaveBeenCalled();
  });

  it('the session query asks with throw: a missing session is an answer, not a redirect', async () => {
    server.use(http.get('/api/auth/session', unauthorized));
    expect((await caught(getSession())).status).toBe(401);
    expect(toSignIn).not.toHaveBeenCalled();
  });

  it('other errors never go to sign-in', async () => {
    server.use(
      http.get('/api/apps', () => HttpResponse.json({ error: { code: 'Forbidden', message: 'no' } }, { status: 403 })),
    );
    expect((await caught(apiGet('/api/apps', Ok))).status).toBe(403);
    expect(toSignIn).not.toHaveBeenCalled();
  });
});

describe('ApiError', () => {
  it('carries the request id of a 5xx answer', async () => {
    server.use(
      http.post('/api/apps/x/reconcile', () =>
        HttpResponse.json(
          { error: { code: 'Internal', message: 'the console failed', requestId: 'req-42' } },
          { status: 500 },
        ),
      ),
    );
    const e = await caught(apiSend('POST', '/api/apps/x/reconcile', Ok));
    expect(e).toMatchObject({ status: 500, code: 'Internal', message: 'the console failed', requestId: 'req-42' });
  });

  it('says when the server is not reachable', async () => {
    server.use(http.get('/api/apps', () => HttpResponse.error()));
    expect(await caught(apiGet('/api/apps', Ok))).toMatchObject({ status: 0, code: 'Network' });
  });
});

describe('schemas given as loaders (the shell passes lazy-parsers.ts loaders)', () => {
  it('loads the schema beside the request and parses the answer with it', async () => {
    server.use(http.get('/api/apps', () => HttpResponse.json({ ok: true })));
    const load = vi.fn(() => Promise.resolve(Ok));
    expect(await apiGet('/api/apps', load)).toEqual({ ok: true });
    expect(load).toHaveBeenCalledTimes(1);
    // a wrong answer still fails the schema
    server.use(http.get('/api/apps', () => HttpResponse.json({ ok: 'yes' })));
    await expect(apiGet('/api/apps', load)).rejects.toThrow();
  });

  it('a loader that fails is a clear error (reload the page); an error answer needs no schema at all', async () => {
    server.use(http.get('/api/apps', () => HttpResponse.json({ ok: true })));
    const broken = () => Promise.reject(new Error('chunk gone'));
    expect(await caught(apiGet('/api/apps', broken))).toMatchObject({ status: 0, code: 'Network' });
    expect((await caught(apiGet('/api/apps', broken))).message).toMatch(/reload the page/);
    server.use(
      http.get('/api/apps', () =>
        HttpResponse.json({ error: { code: 'Busy', message: 'later', requestId: 'r1' } }, { status: 503 }),
      ),
    );
    expect(await caught(apiGet('/api/apps', broken))).toMatchObject({
      status: 503,
      code: 'Busy',
      message: 'later',
      requestId: 'r1',
    });
    // an error body of another shape is a plain HTTP error
    server.use(http.get('/api/apps', () => HttpResponse.json({ error: 'nope' }, { status: 500 })));
    expect(await caught(apiGet('/api/apps', broken))).toMatchObject({ status: 500, code: 'HttpError' });
  });

  it('the real loader gives the schemas by name, and the apps list parses with the fast parser', async () => {
    const { lazy } = await import('./lazy-parsers.ts');
    const apps = await lazy('AppsFast')();
    expect(apps.parse({ apps: [], total: 0, envs: ['dev'] })).toEqual({ apps: [], total: 0, envs: ['dev'] });
    expect(() => apps.parse({ apps: [{ id: 1 }] })).toThrow();
  });
});
