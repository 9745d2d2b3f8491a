import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { KubeError } from '../kube/connection.ts';
import { clusterHttpError, HttpError, installErrorHandler, localDiskError, storeUnreachable } from './errors.ts';

describe('clusterHttpError: the one mapping from a cluster answer to the console answer', () => {
  const cases: Array<[number, number, string]> = [
    [403, 403, 'Forbidden'],
    [404, 404, 'NotFound'],
    [409, 409, 'Conflict'],
    [410, 409, 'Conflict'],
    [422, 422, 'Invalid'],
    [429, 429, 'TooManyRequests'],
    [500, 502, 'ClusterError'],
    [503, 502, 'ClusterError'],
    [0, 502, 'ClusterUnreachable'],
  ];
  it.each(cases)('cluster %i → %i %s', (from, to, code) => {
    const e = clusterHttpError(new KubeError('PATCH x: boom', 'nonprod', from, undefined, 2500), 'annotate', 'nonprod');
    expect(e).toBeInstanceOf(HttpError);
    expect([(e as HttpError).status, (e as HttpError).code]).toEqual([to, code]);
    if (from === 429) expect((e as HttpError).retryAfterSeconds).toBe(3);
  });
  it('leaves other errors alone', () => {
    const e = new Error('x');
    expect(clusterHttpError(e, 'a', 'b')).toBe(e);
  });
});

describe('the error handler', () => {
  async function app() {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const a = Fastify({ logger: { level: 'info', stream }, genReqId: () => 'req12345' });
    installErrorHandler(a);
    a.get('/cluster-down', async () => {
      throw clusterHttpError(new KubeError('GET x: etcd leader lost', 'prod', 500), 'read', 'prod');
    });
    a.get('/crash', async () => {
      throw new Error('TypeError in the internals: token=abc');
    });
    a.get('/slow-down', async () => {
      throw clusterHttpError(new KubeError('too many', 'prod', 429, undefined, 4000), 'read', 'prod');
    });
    return { a, lines };
  }

  it("5xx bodies are generic and name the request id; the cluster's text goes to the log only", async () => {
    const { a, lines } = await app();
    const r = await a.inject('/cluster-down');
    expect(r.statusCode).toBe(502);
    const body = r.json() as { error: { code: string; message: string; requestId: string } };
    expect(body.error.requestId).toBe('req12345');
    expect(body.error.message).not.toContain('etcd leader lost');
    expect(body.error.message).toContain('req12345');
    expect(lines.join('')).toContain('etcd leader lost');
    const crash = await a.inject('/crash');
    expect(crash.statusCode).toBe(500);
    expect(crash.body).not.toContain('TypeError');
    expect(crash.json()).toMatchObject({ error: { code: 'Internal', requestId: 'req12345' } });
  });

  it('429 passes Retry-After on', async () => {
    const { a } = await app();
    const r = await a.inject('/slow-down');
    expect(r.statusCode).toBe(429);
    expect(r.headers['retry-after']).toBe('4');
  });
});

describe('the console database unreachable', () => {
  it.each([
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }, true],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, true],
    [{ message: 'Connection terminated unexpectedly' }, true],
    [{ code: 'SQLITE_IOERR_WRITE', message: 'disk I/O error' }, true],
    [{ code: 'SQLITE_FULL', message: 'database or disk is full' }, true],
    [{ code: 'EFBIG', message: 'EFBIG: file too large, write' }, true],
    [{ code: 'ENOSPC', message: 'ENOSPC: no space left on device, write' }, true],
    [{ code: 'SQLITE_CONSTRAINT_UNIQUE', message: 'UNIQUE constraint failed' }, false],
    [{ message: 'x is not a function' }, false],
  ])('%j → %s', (err, expected) => {
    expect(storeUnreachable(err)).toBe(expected);
  });

  it('a request that meets it is a 503 naming the database, with Retry-After, not an internal error', async () => {
    const app = Fastify({ logger: false });
    installErrorHandler(app);
    app.get('/x', async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    const r = await app.inject({ method: 'GET', url: '/x' });
    expect(r.statusCode).toBe(503);
    expect(r.headers['retry-after']).toBe('5');
    expect(r.json()).toMatchObject({ error: { code: 'StoreUnavailable' } });
    expect(r.body).not.toContain('5432');
  });
});

describe("the console's own disk in an error", () => {
  it.each([
    [Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG' }), 'EFBIG'],
    [new Error('git fetch failed: error: unable to write file: No space left on device'), 'No space left on device'],
    [new Error('git index-pack died of signal SIGXFSZ'), 'SIGXFSZ'],
    [new Error('open /data/x: read-only file system'), 'read-only file system'],
    [new Error('fatal: repository not found'), undefined],
    [Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), undefined],
  ])('%s → %s', (e, expected) => {
    expect(localDiskError(e)).toBe(expected);
  });
});
