// The browser's page of visible events: the per-grant filter runs after the query, so short pages read on.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { parseGrant } from '../../domain/access.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import type { EvidenceQuery } from './store.ts';
import { readerFilter, storeFilter, visiblePage } from './routes.ts';

const N = 100;
const events: EvidenceEvent[] = Array.from({ length: N }, (_, i) => ({
  seq: N - i,
  time: '2026-01-01T00:00:00.000Z',
  type: 'app.revision-observed',
  actor: 'c',
  cluster: (N - i) % 10 === 0 ? 'prod' : 'nonprod',
  data: {},
  prevHash: '',
  hash: '',
}));

function fakeList() {
  const calls: EvidenceQuery[] = [];
  const list = async (q: EvidenceQuery) => {
    calls.push(q);
    return events.filter((e) => q.beforeSeq === undefined || e.seq < q.beforeSeq).slice(0, q.limit);
  };
  return { calls, list };
}

describe('visiblePage', () => {
  it('everything visible: one query, the cursor is the last seq', async () => {
    const { calls, list } = fakeList();
    const p = await visiblePage(list, {}, () => true, undefined, 20);
    expect(p.events.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => 100 - i));
    expect(p.nextCursor).toBe(81);
    expect(calls).toHaveLength(1);
  });

  it('few visible: reads on until the page is full, and continues below the last one shown', async () => {
    const { calls, list } = fakeList();
    const prodOnly = (e: EvidenceEvent) => e.cluster === 'prod';
    const p = await visiblePage(list, {}, prodOnly, undefined, 3);
    expect(p.events.map((e) => e.seq)).toEqual([100, 90, 80]);
    expect(p.nextCursor).toBe(80);
    expect(calls.length).toBeGreaterThan(1);
    const next = await visiblePage(list, {}, prodOnly, p.nextCursor ?? undefined, 3);
    expect(next.events.map((e) => e.seq)).toEqual([70, 60, 50]);
  });

  it('the end: a short read gives null; the rounds are bounded and say where to go on', async () => {
    const { list } = fakeList();
    const end = await visiblePage(list, {}, () => true, 11, 50);
    expect(end.events).toHaveLength(10);
    expect(end.nextCursor).toBeNull();
    const none = await visiblePage(list, {}, () => false, undefined, 1);
    // 8 rounds: 1 + 7 × 4 rows read (100…72); the next page starts below the last one read
    expect(none).toEqual({ events: [], nextCursor: 72 });
  });

  it('storeFilter maps the query string names (q → text) and drops empty ones', () => {
    expect(storeFilter({ q: '  deploy ', type: [], env: 'prod' })).toEqual({ env: 'prod', text: 'deploy' });
  });
});

describe('readerFilter (the export)', () => {
  const reader = (...grants: string[]) =>
    ({
      principal: { name: 'u', source: 'local', groups: [], grants: grants.map(parseGrant) },
    }) as unknown as FastifyRequest;

  it('none for a reader whose grants cover every cluster and environment: the export is full', () => {
    expect(readerFilter(reader('auditor'))).toBeUndefined();
    expect(readerFilter(reader('viewer', 'admin'))).toBeUndefined();
  });

  it('a reader limited to some clusters or environments: the events they may see, and the grants named', () => {
    const f = readerFilter(reader('reviewer@nonprod/dev', 'viewer', 'oncall@prod'));
    expect(f?.grants).toEqual(['reviewer@nonprod/dev', 'oncall@prod/*']);
    expect(f?.test({ cluster: 'nonprod', env: 'dev' })).toBe(true);
    expect(f?.test({ cluster: 'prod', env: 'prod' })).toBe(true);
    expect(f?.test({ cluster: 'nonprod', env: 'staging' })).toBe(false);
    // events with no cluster (sign-ins, console start) only for grants on everything
    expect(f?.test({ cluster: null, env: null })).toBe(false);
  });
});
