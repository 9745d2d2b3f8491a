// Denials as evidence, bounded (issue 40): the same person denied the same action on the same target is one record
// a minute; app ids the console does not know are one target, so made-up ids cannot flood the chain.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { EvidenceRecorder } from '../evidence/index.ts';
import { recordDenial } from './guard.ts';

const req = (name: string) =>
  ({
    method: 'GET',
    routeOptions: { url: '/api/apps/:cluster/:namespace/:kind/:name' },
    principal: { name },
  }) as unknown as FastifyRequest;

describe('recordDenial', () => {
  it('records unknown app ids once a minute per person, known apps each', () => {
    const seen: Array<{ actor: string; app?: string }> = [];
    const recorder = { observe: (e: { actor: string; app?: string }) => seen.push(e) } as unknown as EvidenceRecorder;
    for (let i = 0; i < 50; i++)
      recordDenial(
        recorder,
        req('mallory'),
        'app.read',
        { cluster: 'prod', env: '*', app: `prod/x/kustomization/made-up-${i}`, unknownApp: true },
        'no grant',
      );
    expect(seen).toHaveLength(1);
    expect(seen[0]?.app).toBe('prod/x/kustomization/made-up-0');
    // another person is another row; two apps the console knows are two targets
    recordDenial(
      recorder,
      req('eve'),
      'app.read',
      { cluster: 'prod', env: '*', app: 'p/x/k/a', unknownApp: true },
      'n',
    );
    recordDenial(recorder, req('mallory'), 'app.read', { cluster: 'prod', env: 'prod', app: 'p/x/k/known-1' }, 'n');
    recordDenial(recorder, req('mallory'), 'app.read', { cluster: 'prod', env: 'prod', app: 'p/x/k/known-2' }, 'n');
    expect(seen.map((e) => [e.actor, e.app])).toEqual([
      ['mallory', 'prod/x/kustomization/made-up-0'],
      ['eve', 'p/x/k/a'],
      ['mallory', 'p/x/k/known-1'],
      ['mallory', 'p/x/k/known-2'],
    ]);
  });
});
