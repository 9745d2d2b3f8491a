// The event sinks' admin API (api/sinks.ts). An admin on every cluster and environment only (scope `everywhere`:
// a sink hears every cluster's evidence); a refusal is recorded by the guard. Without sinks, GET lists none.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { RetryDeadLetterParams, RetryDeadLetterResponse, SinksResponse } from '../../api/sinks.ts';
import type { Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';

const person = (req: FastifyRequest): Principal => {
  const p = req.principal;
  if (!p) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
  return p;
};
/** dead letters listed per sink (the count says how many there are) */
const LISTED = 200;

export const sinkRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get('/api/sinks', { config: { access: { action: 'sinks.manage', scope: 'everywhere' } } }, async () => {
    const s = deps.sinks;
    if (!s) return validated(SinksResponse, { sinks: [], delivering: false });
    const sinks = await Promise.all(
      s.delivery.status().map(async (x) => {
        const [deadLetters, deadLetterCount] = await Promise.all([
          s.sinkStore.deadLetters(x.name, LISTED),
          s.sinkStore.deadLetterCount(x.name),
        ]);
        return { ...x, deadLetters, deadLetterCount };
      }),
    );
    return validated(SinksResponse, { delivering: s.delivering(), sinks });
  });

  app.post(
    '/api/sinks/:name/dead-letters/:seq/retry',
    { config: { access: { action: 'sinks.manage', scope: 'everywhere' } } },
    async (req, rep) => {
      const p = person(req);
      const { name, seq } = parsed(RetryDeadLetterParams, req.params);
      const s = deps.sinks;
      if (!s?.delivery.sinks().some((x) => x.name === name)) throw new HttpError(404, 'NotFound', `no sink ${name}`);
      if (!(await s.sinkStore.deadLetter(name, seq)))
        throw new HttpError(404, 'NotFound', `no dead letter ${seq} for sink ${name}`);
      const r = await deps.recorder.act(
        { time: new Date().toISOString(), type: 'sink.redelivery', actor: p.name, data: { sink: name, seq } },
        async () => s.delivery.retryDeadLetter(name, seq),
        (o) => (o.ok ? { delivered: o.value.ok, ...(o.value.ok ? {} : { error: o.value.error }) } : {}),
      );
      if (!r.ok) throw new HttpError(502, 'SinkRefused', `the sink did not take record ${seq}: ${r.error}`);
      return rep.code(200).send(validated(RetryDeadLetterResponse, r));
    },
  );
};
