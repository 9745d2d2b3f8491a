import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installRequestContext, requestIdMixin } from './request-context.ts';

describe('request ids in the log', () => {
  it('a line the app logger writes during a request carries that request id, once; a line outside none', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const raw: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _e, cb) {
        raw.push(chunk.toString());
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        cb();
      },
    });
    let n = 0;
    const app = Fastify({ logger: { level: 'info', stream, mixin: requestIdMixin }, genReqId: () => `r${++n}` });
    installRequestContext(app);
    app.get('/work', async (req) => {
      await new Promise((r) => setTimeout(r, 5));
      app.log.info('service line');
      req.log.info('request line');
      return { ok: true };
    });
    await Promise.all([app.inject('/work'), app.inject('/work')]);
    app.log.info('outside');
    await app.close();
    const service = lines.filter((l) => l.msg === 'service line');
    expect(service.map((l) => l.reqId).sort()).toEqual(['r1', 'r2']);
    expect(
      lines
        .filter((l) => l.msg === 'request line')
        .map((l) => l.reqId)
        .sort(),
    ).toEqual(['r1', 'r2']);
    // the request logger's own binding is not repeated
    for (const r of raw.filter((l) => l.includes('request line'))) expect(r.match(/"reqId"/g)).toHaveLength(1);
    expect(lines.find((l) => l.msg === 'outside')?.reqId).toBeUndefined();
  });
});
