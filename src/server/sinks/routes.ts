// The event sinks' admin API (api/sinks.ts). An admin on every cluster and environment only: a sink hears every
// cluster's evidence. Registered when sinks are configured; without any, GET answers an empty list.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { can } from '../../domain/access.ts';
import { RetryDeadLetterParams, RetryDeadLetterResponse, SinksResponse } from '../../api/sinks.ts';
import type { Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';

const everywhereAdmin = (req: FastifyRequest): Principal => {
  const p = req.principal;
  if (!p) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
  if (!can(p.grants, 'sinks.manage', { cluster: '*', env: '*' }))
    throw new HttpError(403, 'Forbidden', 'You need the admin role on every cluster to manage event sinks');
  return p;
};

export const sinkRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get('/api/sinks', { config: { access: { action: 'sinks.manage', scope: 'anywhere' } } }, async (req) => {
    everywhereAdmin(req);
    const s = deps.sinks;
    if (!s) return validated(SinksResponse, { sinks: [], delivering: false });
    const dead = await s.sinkStore.deadLetters(undefined, 1000);
    return validated(SinksResponse, {
      delivering: s.delivering(),
      sinks: s.delivery.status().map((x) => ({ ...x, deadLetters: dead.filter((d) => d.sink === x.name) })),
    });
  });

  app.post(
    '/api/sinks/:name/dead-letters/:seq/retry',
    { config: { access: { action: 'sinks.manage', scope: 'anywhere' } } },
    async (req, rep) => {
      const p = everywhereAdmin(req);
      const { name, seq } = parsed(RetryDeadLetterParams, req.params);
      const s = deps.sinks;
      if (!s?.delivery.sinks().some((x) => x.name === name)) throw new HttpError(404, 'NotFound', `no sink ${name}`);
      if (!(await s.sinkStore.deadLetters(name)).some((d) => d.seq === seq))
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
